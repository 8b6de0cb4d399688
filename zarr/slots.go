package zarr

import (
	"container/heap"
	"context"
	"sync"
)

// decodeSlots lets a bounded number of read-ahead loads decode at once,
// lowest chunk first. On a remote store a sequential reader's read-ahead
// has many chunks in flight (a second or two of the store's throughput);
// decoding each as soon as its bytes arrive shared the cores among all of
// them, and the chunk the reader waited for finished with the last. Taken
// in chunk order, the chunks decode in the order the reader asks for them
// and its reads, which keep the read-ahead going, never stall behind it.
// A read's own chunks take no slot. Its zero value has no slots: use
// newDecodeSlots.
type decodeSlots struct {
	mu      sync.Mutex
	free    int
	waiting slotQueue
}

func newDecodeSlots(n int) *decodeSlots { return &decodeSlots{free: n} }

// acquire waits for a slot for chunk lin, and fails only when ctx ends
// first (then it holds none).
func (s *decodeSlots) acquire(ctx context.Context, lin int64) error {
	s.mu.Lock()
	if s.free > 0 && len(s.waiting) == 0 {
		s.free--
		s.mu.Unlock()
		return nil
	}
	w := &slotWaiter{lin: lin, granted: make(chan struct{})}
	heap.Push(&s.waiting, w)
	s.mu.Unlock()
	select {
	case <-w.granted:
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		defer s.mu.Unlock()
		select {
		case <-w.granted: // granted meanwhile: pass it on
			s.releaseLocked()
		default:
			heap.Remove(&s.waiting, w.index)
		}
		return ctx.Err()
	}
}

// release gives a slot back, to the waiting load of the lowest chunk.
func (s *decodeSlots) release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.releaseLocked()
}

func (s *decodeSlots) releaseLocked() {
	if len(s.waiting) == 0 {
		s.free++
		return
	}
	close(heap.Pop(&s.waiting).(*slotWaiter).granted)
}

// slotWaiter is a load waiting for a slot.
type slotWaiter struct {
	lin     int64
	index   int // in the queue
	granted chan struct{}
}

// slotQueue is a min-heap of waiters by chunk.
type slotQueue []*slotWaiter

func (q slotQueue) Len() int           { return len(q) }
func (q slotQueue) Less(i, j int) bool { return q[i].lin < q[j].lin }
func (q slotQueue) Swap(i, j int) {
	q[i], q[j] = q[j], q[i]
	q[i].index, q[j].index = i, j
}
func (q *slotQueue) Push(x any) {
	w := x.(*slotWaiter)
	w.index = len(*q)
	*q = append(*q, w)
}
func (q *slotQueue) Pop() any {
	old := *q
	w := old[len(old)-1]
	old[len(old)-1] = nil
	*q = old[:len(old)-1]
	return w
}
