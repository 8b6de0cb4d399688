package remote

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

// Controller decides how many requests to one remote store run at once.
// A far store answers each request after a round trip, so a reader needs
// many requests in flight to reach the store's bandwidth (the
// bandwidth-delay product); a store that is overloaded says so by
// throttling (HTTP 429, 503, S3 SlowDown) or by answering more slowly.
//
// The controller is an AIMD loop over the measured time to the first byte
// of each answer:
//
//   - it starts at Initial requests (high, for far stores) and, until its
//     first cut, grows by one request per request answered (doubling every
//     round trip, as TCP's slow start) up to Ceiling; after a cut it grows
//     by one request per round trip;
//   - a throttled answer halves the limit, and a first-byte latency risen
//     to twice the lowest one of the last 10 to 20 seconds (plus a few
//     milliseconds, so that jitter on a near store is not taken for a
//     queue) cuts it by a fifth, not below a quarter of Initial: at most one
//     cut per round trip, since answers to requests sent before a cut say
//     nothing of the new limit;
//   - after a second (and four round trips) without a cut it grows fast
//     again;
//   - the limit grows only while requests are waiting for a slot, so a
//     reader that needs few requests does not talk it up to the ceiling.
//
// The first cut for throttling in an episode is logged (Logf) once, not per
// request; an episode ends after a minute without throttling.
//
// It also measures the store's throughput (bytes per second of answers),
// which Stats reports.
type Controller struct {
	// now is the clock (time.Now; a virtual clock in tests).
	now  func() time.Time
	logf func(format string, args ...any)
	name string

	mu       sync.Mutex
	limit    float64
	floor    float64 // the least throttling cuts to
	latFloor float64 // the least a risen latency cuts to
	ceiling  float64
	inflight int
	waiting  []*waiter
	slow     bool // a cut was made: grow by one request per round trip

	base     time.Duration // lowest recent first-byte latency: min(baseCur, basePrev)
	baseCur  time.Duration // lowest in the current base window
	basePrev time.Duration // lowest in the window before
	baseAt   time.Time     // start of the current base window
	avg      time.Duration // moving average of first-byte latency
	lastCut  time.Time     // when the limit was last cut

	throttledAt time.Time // the last throttled answer (zero: none in this episode)
	logged      bool      // the episode's first back-off was logged
	backoffs    int       // throttling cuts made

	winStart time.Time // start of the throughput window
	winBytes int64
	rate     float64 // bytes per second, moving average over windows
}

type waiter struct {
	ready  chan struct{} // closed when granted a slot
	t      *Ticket       // the slot, once granted (under mu)
	urgent bool          // queued ahead of the others (store.Urgent)
}

// ControllerOptions configures NewController.
type ControllerOptions struct {
	// Ceiling is the most requests in flight (DefaultCeiling when ≤ 0).
	Ceiling int
	// Initial is the limit at the start (min(DefaultInitial, Ceiling)
	// when ≤ 0).
	Initial int
	// Floor is the fewest requests the limit is cut to (min(DefaultFloor,
	// Ceiling) when ≤ 0).
	Floor int
	// Name names the store in log lines.
	Name string
	// Logf logs the start of a throttling episode; nil: no log.
	Logf func(format string, args ...any)
	// now is the clock; nil: time.Now.
	now func() time.Time
}

// Defaults of ControllerOptions: a ceiling that fills the bandwidth-delay
// product of a store 100 ms away read in 1 MiB requests at about 1 GB/s,
// and a start at half of it.
const (
	DefaultCeiling = 128
	DefaultInitial = 64
	DefaultFloor   = 4
)

// Controller constants.
const (
	throttleCut   = 0.5                  // the limit is multiplied by this on throttling
	latencyCut    = 0.8                  // … and by this on risen latency
	latencyFactor = 2                    // latency counts as risen above latencyFactor × base …
	latencySlack  = 5 * time.Millisecond // … plus this
	avgWeight     = 0.125                // weight of a new sample in the latency average
	baseWindow    = 10 * time.Second     // the base latency is the lowest of the last one or two such windows
	episodeQuiet  = time.Minute          // a throttling episode ends after this without throttling
	minWindow     = 50 * time.Millisecond
	// latencyFloorDiv: a risen latency never cuts the limit below
	// Initial / latencyFloorDiv, since a store that became slower for a
	// while without queueing would otherwise be starved.
	latencyFloorDiv = 4
	// recoverQuiet: after this long (and at least recoverRounds round
	// trips) without a cut, the limit grows fast again (slow start), so
	// that a burst of throttling does not hold a read back for long.
	recoverQuiet  = time.Second
	recoverRounds = 4
)

// NewController returns a controller for one store.
func NewController(o ControllerOptions) *Controller {
	o.Ceiling = positiveOr(o.Ceiling, DefaultCeiling)
	o.Initial = min(positiveOr(o.Initial, DefaultInitial), o.Ceiling)
	o.Floor = min(positiveOr(o.Floor, DefaultFloor), o.Initial)
	c := &Controller{now: o.now, logf: o.Logf, name: o.Name,
		limit: float64(o.Initial), floor: float64(o.Floor), ceiling: float64(o.Ceiling)}
	c.latFloor = max(c.floor, float64(o.Initial)/latencyFloorDiv)
	if c.now == nil {
		c.now = time.Now
	}
	return c
}

// Ticket is one request's slot. Call FirstByte when the answer's headers
// arrive and Done once when the request is over.
type Ticket struct {
	c         *Controller
	start     time.Time
	firstByte time.Time
}

// Acquire waits for a slot or for ctx to end. A nil *Controller does not
// limit: it hands out tickets that measure nothing.
func (c *Controller) Acquire(ctx context.Context) (*Ticket, error) {
	if c == nil {
		return nil, ctx.Err()
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t, w := c.enter(store.IsUrgent(ctx))
	if t != nil {
		return t, nil
	}
	select {
	case <-w.ready:
		return w.t, nil
	case <-ctx.Done():
		c.mu.Lock()
		if w.t != nil {
			// Granted as ctx ended: hand the slot on.
			c.inflight--
			c.grantLocked()
		} else {
			for i, x := range c.waiting {
				if x == w {
					c.waiting = append(c.waiting[:i], c.waiting[i+1:]...)
					break
				}
			}
		}
		c.mu.Unlock()
		return nil, ctx.Err()
	}
}

// enter takes a free slot (a ticket) or joins the queue (a waiter, whose
// ready channel is closed once it holds a ticket): at its end, or, for an
// urgent request (store.Urgent), after the urgent ones already waiting.
func (c *Controller) enter(urgent bool) (*Ticket, *waiter) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.waiting) == 0 && c.inflight < c.slots() {
		c.inflight++
		return &Ticket{c: c, start: c.now()}, nil
	}
	w := &waiter{ready: make(chan struct{}), urgent: urgent}
	i := len(c.waiting)
	if urgent {
		i = 0
		for i < len(c.waiting) && c.waiting[i].urgent {
			i++
		}
	}
	c.waiting = slices.Insert(c.waiting, i, w)
	return nil, w
}

// slots is the limit as a count of requests.
func (c *Controller) slots() int { return max(int(c.limit), 1) }

// grantLocked hands free slots to waiters, in order.
func (c *Controller) grantLocked() {
	for len(c.waiting) > 0 && c.inflight < c.slots() {
		w := c.waiting[0]
		c.waiting = c.waiting[1:]
		c.inflight++
		w.t = &Ticket{c: c, start: c.now()}
		close(w.ready)
	}
}

// FirstByte records that the answer's headers arrived.
func (t *Ticket) FirstByte() {
	if t != nil && t.firstByte.IsZero() {
		t.firstByte = t.c.now()
	}
}

// Done releases the slot and lets the controller learn from the request:
// n bytes received, err its outcome (a TransientError marked Throttled
// counts as throttling; other errors teach nothing).
func (t *Ticket) Done(n int64, err error) {
	if t == nil {
		return
	}
	c := t.c
	now := c.now()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inflight--
	var te *TransientError
	switch {
	case errors.As(err, &te) && te.Throttled:
		c.throttled(t, now)
	case err == nil:
		fb := t.firstByte
		if fb.IsZero() {
			fb = now
		}
		c.answered(t, fb.Sub(t.start), n, now)
	}
	c.grantLocked()
}

// throttled handles a throttled answer to the request of t.
func (c *Controller) throttled(t *Ticket, now time.Time) {
	if c.throttledAt.IsZero() || now.Sub(c.throttledAt) > episodeQuiet {
		c.logged = false // a new episode
	}
	c.throttledAt = now
	if !c.cut(t, now, throttleCut) {
		return
	}
	c.backoffs++
	if !c.logged && c.logf != nil {
		c.logged = true
		c.logf("%s: the store is throttling requests: fewer in flight (at most %d now; logged once per episode)", c.name, c.slots())
	}
}

// cut multiplies the limit by f unless the request of t started before the
// last cut; it reports whether it did.
func (c *Controller) cut(t *Ticket, now time.Time, f float64) bool {
	if t.start.Before(c.lastCut) {
		return false
	}
	c.limit = max(c.floor, c.limit*f)
	c.lastCut = now
	c.slow = true
	return true
}

// answered learns from a successful request: its first-byte latency lat
// and its n bytes.
func (c *Controller) answered(t *Ticket, lat time.Duration, n int64, now time.Time) {
	// Throughput, over windows of at least a round trip.
	if c.winStart.IsZero() {
		c.winStart = t.start
	}
	c.winBytes += n
	if el := now.Sub(c.winStart); el >= max(minWindow, c.avg) {
		r := float64(c.winBytes) / el.Seconds()
		if c.rate == 0 {
			c.rate = r
		} else {
			c.rate += (r - c.rate) / 2
		}
		c.winStart, c.winBytes = now, 0
	}
	// Latency: the base is the lowest of the last one or two windows, so
	// that a store that has become slower for good is not taken for a
	// queue for longer than that.
	if now.Sub(c.baseAt) >= baseWindow {
		c.basePrev, c.baseCur, c.baseAt = c.baseCur, 0, now
	}
	if c.baseCur == 0 || lat < c.baseCur {
		c.baseCur = lat
	}
	c.base = c.baseCur
	if c.basePrev != 0 {
		c.base = min(c.base, c.basePrev)
	}
	if c.avg == 0 {
		c.avg = lat
	} else {
		c.avg += time.Duration(avgWeight * float64(lat-c.avg))
	}
	if c.avg > latencyFactor*c.base+latencySlack && c.limit > c.latFloor && c.cut(t, now, latencyCut) {
		c.limit = max(c.limit, c.latFloor)
		return
	}
	if c.slow && now.Sub(c.lastCut) > max(recoverQuiet, recoverRounds*c.avg) {
		c.slow = false
	}
	if len(c.waiting) == 0 && c.inflight+1 < c.slots() {
		return // the limit is not what holds requests back
	}
	if c.slow {
		c.limit += 1 / c.limit
	} else {
		c.limit++
	}
	c.limit = min(c.limit, c.ceiling)
}

// ControllerStats is what a controller has measured.
type ControllerStats struct {
	Limit      int           // requests allowed in flight
	InFlight   int           // requests in flight
	Latency    time.Duration // moving average of the time to the first byte
	Base       time.Duration // lowest recent time to the first byte
	Throughput float64       // bytes per second
	Backoffs   int           // cuts made for throttling
}

// Stats returns what c has measured.
func (c *Controller) Stats() ControllerStats {
	if c == nil {
		return ControllerStats{}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return ControllerStats{Limit: c.slots(), InFlight: c.inflight, Latency: c.avg, Base: c.base,
		Throughput: c.rate, Backoffs: c.backoffs}
}
