package remote

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

// simStore is a remote store simulated in virtual time: each request waits
// for one of slots server slots (0: no bound), then answers after firstByte
// and sends size bytes at perConn bytes per second. With throttleAbove > 0,
// a request arriving while more than that many are at the server is
// answered 503 after firstByte.
type simStore struct {
	firstByte     time.Duration
	perConn       float64
	slots         int
	throttleAbove int
}

// simResult is what a simulated read measured.
type simResult struct {
	elapsed   time.Duration
	throttled int
	stats     ControllerStats
	logs      []string
	maxLimit  int
}

// simulate reads n values of size bytes from st through a controller made
// with o, the reader keeping up to demand requests wanted at once (a
// throttled request is retried after 100 ms, as Do would), all in virtual
// time. It fails t if a request is lost.
func simulate(t *testing.T, st simStore, o ControllerOptions, n, demand int, size int64) simResult {
	t.Helper()
	var now time.Time = time.Unix(0, 0)
	var res simResult
	o.now = func() time.Time { return now }
	o.Name = "sim"
	o.Logf = func(f string, a ...any) { res.logs = append(res.logs, fmt.Sprintf(f, a...)) }
	c := NewController(o)

	var q events
	var serverQueue []*Ticket // requests waiting for a server slot
	atServer := 0
	pending, outstanding, done := n, 0, 0
	var waiters []*waiter

	var enter func()
	var serve func(tk *Ticket)
	// serve: the server answers the request of tk.
	serve = func(tk *Ticket) {
		fb := now.Add(st.firstByte)
		end := fb.Add(time.Duration(float64(size) / st.perConn * float64(time.Second)))
		heap.Push(&q, event{at: fb, fn: func() { tk.FirstByte() }})
		heap.Push(&q, event{at: end, fn: func() {
			tk.Done(size, nil)
			atServer--
			done++
			outstanding--
			if len(serverQueue) > 0 {
				next := serverQueue[0]
				serverQueue = serverQueue[1:]
				serve(next)
			}
		}})
	}
	// arrive: the request of tk reaches the server.
	arrive := func(tk *Ticket) {
		if st.throttleAbove > 0 && atServer >= st.throttleAbove {
			heap.Push(&q, event{at: now.Add(st.firstByte), fn: func() {
				tk.FirstByte()
				tk.Done(0, &TransientError{Err: errors.New("503 SlowDown"), Throttled: true})
				res.throttled++
				heap.Push(&q, event{at: now.Add(100 * time.Millisecond), fn: func() { enter() }})
			}})
			return
		}
		atServer++
		if st.slots > 0 && atServer > st.slots {
			serverQueue = append(serverQueue, tk)
			return
		}
		serve(tk)
	}
	enter = func() {
		tk, w := c.enter(false)
		if tk != nil {
			arrive(tk)
		} else {
			waiters = append(waiters, w)
		}
	}
	// pump starts the requests granted a slot and issues new ones up to
	// the reader's demand.
	pump := func() {
		for i := 0; i < len(waiters); {
			if w := waiters[i]; w.t != nil {
				waiters = append(waiters[:i], waiters[i+1:]...)
				arrive(w.t)
				continue
			}
			i++
		}
		for pending > 0 && outstanding < demand {
			pending--
			outstanding++
			enter()
		}
	}
	pump()
	for done < n {
		if q.Len() == 0 {
			t.Fatalf("simulation stalled: %d of %d done, %d waiting, stats %+v", done, n, len(waiters), c.Stats())
		}
		e := heap.Pop(&q).(event)
		now = e.at
		e.fn()
		pump()
		res.maxLimit = max(res.maxLimit, c.Stats().Limit)
	}
	res.elapsed = now.Sub(time.Unix(0, 0))
	res.stats = c.Stats()
	return res
}

type event struct {
	at  time.Time
	seq int
	fn  func()
}

type events []event

var eventSeq int

func (e events) Len() int { return len(e) }
func (e events) Less(i, j int) bool {
	if !e[i].at.Equal(e[j].at) {
		return e[i].at.Before(e[j].at)
	}
	return e[i].seq < e[j].seq
}
func (e events) Swap(i, j int) { e[i], e[j] = e[j], e[i] }
func (e *events) Push(x any) {
	ev := x.(event)
	eventSeq++
	ev.seq = eventSeq
	*e = append(*e, ev)
}
func (e *events) Pop() any {
	old := *e
	x := old[len(old)-1]
	*e = old[:len(old)-1]
	return x
}

const mib = 1 << 20

// A far store with no bound of its own: the limit grows to the ceiling,
// and the read runs at the ceiling's bandwidth-delay product.
func TestControllerFillsTheBandwidthDelayProduct(t *testing.T) {
	st := simStore{firstByte: 50 * time.Millisecond, perConn: 80e6}
	r := simulate(t, st, ControllerOptions{Ceiling: 128, Initial: 16}, 4000, 100000, mib)
	per := st.firstByte + time.Duration(mib/st.perConn*float64(time.Second))
	ideal := time.Duration(4000/128) * per
	t.Logf("elapsed %v (ideal at the ceiling %v), stats %+v", r.elapsed, ideal, r.stats)
	if r.stats.Limit != 128 {
		t.Errorf("limit %d; want the ceiling, 128", r.stats.Limit)
	}
	if r.elapsed > ideal*12/10 {
		t.Errorf("read took %v; at the ceiling it takes %v", r.elapsed, ideal)
	}
	if want := 128 * mib / per.Seconds(); r.stats.Throughput < 0.8*want || r.stats.Throughput > 1.2*want {
		t.Errorf("measured throughput %.0f B/s; want about %.0f", r.stats.Throughput, want)
	}
	if r.stats.Base != st.firstByte || r.stats.Latency != st.firstByte {
		t.Errorf("latency %v, base %v; want %v", r.stats.Latency, r.stats.Base, st.firstByte)
	}
}

// A store that serves 40 requests at a time and queues the others: the
// limit settles where the queue adds no more than a round trip, below the
// ceiling, and the store is kept busy.
func TestControllerConvergesOnAQueueingStore(t *testing.T) {
	st := simStore{firstByte: 50 * time.Millisecond, perConn: 80e6, slots: 40}
	r := simulate(t, st, ControllerOptions{Ceiling: 512, Initial: 64}, 6000, 100000, mib)
	per := st.firstByte + time.Duration(mib/st.perConn*float64(time.Second))
	ideal := time.Duration(6000/40) * per
	t.Logf("elapsed %v (store busy all along: %v), max limit %d, stats %+v", r.elapsed, ideal, r.maxLimit, r.stats)
	if r.elapsed > ideal*11/10 {
		t.Errorf("read took %v; the store serves it in %v", r.elapsed, ideal)
	}
	if r.stats.Limit < 40 || r.stats.Limit > 4*40 {
		t.Errorf("limit %d; want between the store's 40 slots and 4 × that", r.stats.Limit)
	}
	if r.maxLimit >= 512 {
		t.Errorf("the limit reached the ceiling, %d", r.maxLimit)
	}
	if r.stats.Latency > 4*st.firstByte {
		t.Errorf("first-byte latency %v; the queue should add about a round trip to %v", r.stats.Latency, st.firstByte)
	}
}

// A store that throttles (503 SlowDown) above 24 requests at the server:
// the controller backs off below that, the read completes, and the log
// says so once.
func TestControllerBacksOffOnThrottling(t *testing.T) {
	st := simStore{firstByte: 50 * time.Millisecond, perConn: 80e6, throttleAbove: 24}
	r := simulate(t, st, ControllerOptions{Ceiling: 256, Initial: 64}, 4000, 100000, mib)
	t.Logf("elapsed %v, %d throttled, stats %+v, logs %q", r.elapsed, r.throttled, r.stats, r.logs)
	if r.stats.Backoffs == 0 {
		t.Error("no back-off")
	}
	if r.stats.Limit > 24 {
		t.Errorf("limit %d after throttling above 24", r.stats.Limit)
	}
	if len(r.logs) != 1 {
		t.Errorf("%d log lines; want one per episode: %q", len(r.logs), r.logs)
	}
	if r.throttled > 4000/4 {
		t.Errorf("%d of 4000 requests throttled", r.throttled)
	}
	per := st.firstByte + time.Duration(mib/st.perConn*float64(time.Second))
	if best := time.Duration(4000/24) * per; r.elapsed > 2*best {
		t.Errorf("read took %v; at 24 in flight it takes %v", r.elapsed, best)
	}
}

// A reader that wants few requests at once does not talk the limit up.
func TestControllerGrowsOnlyWhenUsed(t *testing.T) {
	st := simStore{firstByte: 20 * time.Millisecond, perConn: 80e6}
	r := simulate(t, st, ControllerOptions{Ceiling: 256, Initial: 32}, 1000, 4, mib)
	if r.stats.Limit != 32 {
		t.Errorf("limit %d after a reader that kept 4 requests in flight; want 32", r.stats.Limit)
	}
}

// Acquire waits for a slot, gives up with ctx, and a nil controller does
// not limit.
func TestControllerAcquire(t *testing.T) {
	c := NewController(ControllerOptions{Ceiling: 1})
	tk, err := c.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := c.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("second Acquire: %v; want DeadlineExceeded", err)
	}
	got := make(chan *Ticket)
	go func() {
		t2, err := c.Acquire(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- t2
	}()
	tk.FirstByte()
	tk.Done(10, nil)
	(<-got).Done(0, errors.New("not found"))
	if s := c.Stats(); s.InFlight != 0 || len(c.waiting) != 0 {
		t.Errorf("after all Done: %+v, %d waiting", s, len(c.waiting))
	}
	var none *Controller
	nt, err := none.Acquire(context.Background())
	if err != nil {
		t.Errorf("nil controller: %v", err)
	}
	nt.FirstByte()
	nt.Done(1, nil)
	if s := none.Stats(); s != (ControllerStats{}) {
		t.Errorf("nil controller stats %+v", s)
	}
}

// An urgent request (store.Urgent) waits ahead of the others, behind
// the urgent ones that came before it. It runs in a synctest bubble, where
// synctest.Wait sees each request waiting.
func TestControllerUrgentFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		c := NewController(ControllerOptions{Ceiling: 1})
		tk, err := c.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		order := make(chan string, 4)
		waiting := 0
		queue := func(name string, ctx context.Context) {
			go func() {
				t2, err := c.Acquire(ctx)
				if err != nil {
					t.Error(err)
					return
				}
				order <- name
				t2.Done(0, nil)
			}()
			// Each waits in turn before the next comes.
			waiting++
			synctest.Wait()
			if countWaiting(c) < waiting {
				t.Fatalf("%s never waited", name)
			}
		}
		bg, urgent := context.Background(), store.Urgent(context.Background())
		queue("a", bg)
		queue("b", bg)
		queue("c", urgent)
		queue("d", urgent)
		tk.Done(0, nil)
		var got []string
		for range 4 {
			got = append(got, <-order)
		}
		if want := []string{"c", "d", "a", "b"}; !slices.Equal(got, want) {
			t.Errorf("granted %v; want %v", got, want)
		}
	})
}

func countWaiting(c *Controller) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiting)
}

// An episode of throttling is logged at its first back-off, even when its
// first throttled answer made none (its request started before the last
// cut, a cut for risen latency here).
func TestControllerLogsEpisodeAtFirstBackOff(t *testing.T) {
	now := time.Unix(0, 0)
	var logs []string
	c := NewController(ControllerOptions{Ceiling: 8, Initial: 8, now: func() time.Time { return now },
		Logf: func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) }})
	throttled := &TransientError{Throttled: true}
	old, err := c.Acquire(context.Background()) // started before the cut below
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Millisecond)
	c.mu.Lock()
	c.cut(&Ticket{c: c, start: now}, now, latencyCut)
	c.mu.Unlock()
	now = now.Add(time.Millisecond)
	old.Done(0, throttled) // no back-off: the request is older than the cut
	if s := c.Stats(); s.Backoffs != 0 || len(logs) != 0 {
		t.Fatalf("after a throttled answer older than the last cut: %+v, logs %q", s, logs)
	}
	now = now.Add(time.Millisecond)
	a, errA := c.Acquire(context.Background())
	b, errB := c.Acquire(context.Background())
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	now = now.Add(time.Millisecond)
	a.Done(0, throttled) // a back-off, the episode's first: logged
	b.Done(0, throttled) // none: b started before it
	if s := c.Stats(); s.Backoffs != 1 || len(logs) != 1 {
		t.Errorf("after two more throttled answers: %+v, logs %q; want one back-off, logged once", s, logs)
	}
}
