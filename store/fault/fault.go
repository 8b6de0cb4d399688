// Package fault is a store decorator that injects failures, for testing how
// zarrfs behaves when its store misbehaves: requests that fail, hang, answer
// slowly or flap between working and failing. Rules can be changed while the
// store is in use (e.g. while a file system serves it), and the decorator
// counts the requests it has under way, so a test can see that a request
// whose caller went away was really cancelled.
//
// The decorated store keeps exactly the optional interfaces (store.Lister,
// store.Stater, store.InfoGetter, store.Writer, store.PageLister,
// store.ReaderInto, store.AllocGetter) of the store it wraps
// (store.Decorate), and io.Closer.
package fault

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

// ErrInjected is the error failing requests return unless a Rule names
// another.
var ErrInjected = errors.New("fault: injected store error")

// Kind is what a Rule does to the requests it matches.
type Kind int

const (
	// Error fails the request with the rule's Err.
	Error Kind = iota + 1
	// Hang blocks the request until its context is done (or, with
	// IgnoreContext, until the rules change or the store is closed).
	Hang
	// Slow delays the request by Delay, then answers it normally.
	Slow
	// Flap lets Up requests through, fails the next Down ones, and so on.
	Flap
)

func (k Kind) String() string {
	switch k {
	case Error:
		return "error"
	case Hang:
		return "hang"
	case Slow:
		return "slow"
	case Flap:
		return "flap"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Rule is one fault. The first rule that matches a request applies.
type Rule struct {
	Kind Kind
	// Prefix selects the keys the rule applies to ("" for every key); a
	// listing matches by the directory or prefix it lists.
	Prefix string
	// Ops limits the rule to some operations: any of "get" (GetRangeInfo,
	// ReadInto and GetAlloc too), "list", "stat", "set", "delete"; none
	// means all.
	Ops []string
	// Err is what Error and Flap fail with; nil means ErrInjected.
	Err error
	// Delay is how long Slow waits.
	Delay time.Duration
	// Up and Down are Flap's run lengths (both at least 1).
	Up, Down int
	// IgnoreContext makes Hang and Slow ignore cancellation, as a stuck
	// network file system does.
	IgnoreContext bool

	count atomic.Int64 // requests this rule matched (Flap's phase)
}

func (r *Rule) matches(op, key string) bool {
	if !strings.HasPrefix(key, r.Prefix) {
		return false
	}
	if len(r.Ops) == 0 {
		return true
	}
	for _, o := range r.Ops {
		if o == op {
			return true
		}
	}
	return false
}

func (r *Rule) err() error {
	if r.Err != nil {
		return r.Err
	}
	return ErrInjected
}

// Store is a fault-injecting decorator. Use New to get one that keeps the
// wrapped store's optional interfaces.
type Store struct {
	s store.Store

	mu      sync.Mutex
	rules   []*Rule
	changed chan struct{} // closed when the rules change: hung IgnoreContext calls return

	active    atomic.Int64
	calls     atomic.Int64
	cancelled atomic.Int64
}

// Wrap returns the decorator around s as *Store. Its Store method (or New)
// gives the value to hand to the engine.
func Wrap(s store.Store) *Store {
	return &Store{s: s, changed: make(chan struct{})}
}

// Store returns the wrapped store decorated with f's rules, keeping its
// optional interfaces.
func (f *Store) Store() store.Store { return store.Decorate(&base{f}, f.s) }

// New wraps s and returns the controller and the decorated store.
func New(s store.Store) (*Store, store.Store) {
	f := Wrap(s)
	return f, f.Store()
}

// Set replaces the rules; hung requests that ignore their context are
// released (and then answer normally or by the new rules' verdict on a
// retry).
func (f *Store) Set(rules ...Rule) {
	rs := make([]*Rule, len(rules))
	for i := range rules {
		r := &Rule{}
		*r = Rule{Kind: rules[i].Kind, Prefix: rules[i].Prefix, Ops: rules[i].Ops, Err: rules[i].Err,
			Delay: rules[i].Delay, Up: max(rules[i].Up, 1), Down: max(rules[i].Down, 1), IgnoreContext: rules[i].IgnoreContext}
		rs[i] = r
	}
	f.mu.Lock()
	f.rules = rs
	close(f.changed)
	f.changed = make(chan struct{})
	f.mu.Unlock()
}

// Clear removes every rule.
func (f *Store) Clear() { f.Set() }

// Active returns how many requests are inside the decorator now
// (including hung ones).
func (f *Store) Active() int64 { return f.active.Load() }

// Calls returns how many requests the decorator has seen.
func (f *Store) Calls() int64 { return f.calls.Load() }

// Cancelled returns how many hung or slow requests ended because their
// context was done.
func (f *Store) Cancelled() int64 { return f.cancelled.Load() }

// WaitIdle waits until no request is under way, for at most d; it reports
// whether that happened.
func (f *Store) WaitIdle(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for f.Active() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// inject applies the first matching rule to a request; nil lets the
// request through to the wrapped store.
func (f *Store) inject(ctx context.Context, op, key string) error {
	f.mu.Lock()
	var rule *Rule
	for _, r := range f.rules {
		if r.matches(op, key) {
			rule = r
			break
		}
	}
	changed := f.changed
	f.mu.Unlock()
	if rule == nil {
		return nil
	}
	n := rule.count.Add(1) - 1
	wait := func(timer <-chan time.Time) error {
		done := ctx.Done()
		if rule.IgnoreContext {
			done = nil
		}
		select {
		case <-timer:
			return nil
		case <-changed:
			return nil
		case <-done:
			f.cancelled.Add(1)
			return ctx.Err()
		}
	}
	switch rule.Kind {
	case Error:
		return fmt.Errorf("%s %s: %w", op, key, rule.err())
	case Flap:
		if n%int64(rule.Up+rule.Down) >= int64(rule.Up) {
			return fmt.Errorf("%s %s: flapping: %w", op, key, rule.err())
		}
	case Hang:
		return wait(nil)
	case Slow:
		t := time.NewTimer(rule.Delay)
		defer t.Stop()
		return wait(t.C)
	}
	return nil
}

// do counts a request and runs it after its fault, if any.
func do[T any](f *Store, ctx context.Context, op, key string, call func() (T, error)) (T, error) {
	f.calls.Add(1)
	f.active.Add(1)
	defer f.active.Add(-1)
	if store.ValidatePrefix(key) != nil {
		return call() // the wrapped store refuses it as it should
	}
	if err := f.inject(ctx, op, key); err != nil {
		var zero T
		return zero, err
	}
	return call()
}

type base struct{ f *Store }

func (b *base) Get(ctx context.Context, key string) ([]byte, error) {
	return do(b.f, ctx, "get", key, func() ([]byte, error) { return b.f.s.Get(ctx, key) })
}

func (b *base) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	return do(b.f, ctx, "get", key, func() ([]byte, error) { return b.f.s.GetRange(ctx, key, r) })
}

// ReadInto is store.ReaderInto, by the rules of "get"; the wrapped
// store reads into p only while ReadInto runs (a fault comes before it).
func (b *base) ReadInto(ctx context.Context, key string, p []byte, off int64) (int64, error) {
	return do(b.f, ctx, "get", key, func() (int64, error) { return b.f.s.(store.ReaderInto).ReadInto(ctx, key, p, off) })
}

// GetAlloc is store.AllocGetter, by the rules of "get".
func (b *base) GetAlloc(ctx context.Context, key string, alloc func(n int) []byte) ([]byte, error) {
	return do(b.f, ctx, "get", key, func() ([]byte, error) { return b.f.s.(store.AllocGetter).GetAlloc(ctx, key, alloc) })
}

func (b *base) String() string { return b.f.s.String() }

// Close closes the wrapped store if it is an io.Closer.
func (b *base) Close() error {
	if c, ok := b.f.s.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (b *base) GetRangeInfo(ctx context.Context, key string, r store.ByteRange) ([]byte, store.Info, error) {
	return b.getInfo(ctx, key, func(s store.InfoGetter) ([]byte, store.Info, error) { return s.GetRangeInfo(ctx, key, r) })
}

func (b *base) GetIfChanged(ctx context.Context, key string, old store.Info) ([]byte, store.Info, error) {
	return b.getInfo(ctx, key, func(s store.InfoGetter) ([]byte, store.Info, error) { return s.GetIfChanged(ctx, key, old) })
}

// getInfo is a read of key that returns the value's Info too, by get.
func (b *base) getInfo(ctx context.Context, key string, get func(store.InfoGetter) ([]byte, store.Info, error)) ([]byte, store.Info, error) {
	type both struct {
		b    []byte
		info store.Info
	}
	v, err := do(b.f, ctx, "get", key, func() (both, error) {
		p, info, err := get(b.f.s.(store.InfoGetter))
		return both{p, info}, err
	})
	return v.b, v.info, err
}

func (b *base) ListDir(ctx context.Context, dir string) (keys, prefixes []string, err error) {
	type both struct{ keys, prefixes []string }
	r, err := do(b.f, ctx, "list", dirKey(dir), func() (both, error) {
		k, p, err := b.f.s.(store.Lister).ListDir(ctx, dir)
		return both{k, p}, err
	})
	return r.keys, r.prefixes, err
}

func (b *base) ListPrefix(ctx context.Context, prefix string) ([]string, error) {
	return do(b.f, ctx, "list", prefix, func() ([]string, error) {
		return b.f.s.(store.Lister).ListPrefix(ctx, prefix)
	})
}

func (b *base) ListPrefixPage(ctx context.Context, prefix, startAfter string) ([]string, bool, error) {
	type page struct {
		keys []string
		more bool
	}
	r, err := do(b.f, ctx, "list", prefix, func() (page, error) {
		k, more, err := b.f.s.(store.PageLister).ListPrefixPage(ctx, prefix, startAfter)
		return page{k, more}, err
	})
	return r.keys, r.more, err
}

// dirKey is what a listing of dir matches rules by: "a/" for "a".
func dirKey(dir string) string {
	if dir == "" {
		return ""
	}
	return dir + "/"
}

func (b *base) Stat(ctx context.Context, key string) (store.Info, error) {
	return do(b.f, ctx, "stat", key, func() (store.Info, error) {
		return b.f.s.(store.Stater).Stat(ctx, key)
	})
}

func (b *base) Set(ctx context.Context, key string, value []byte) error {
	_, err := do(b.f, ctx, "set", key, func() (struct{}, error) {
		return struct{}{}, b.f.s.(store.Writer).Set(ctx, key, value)
	})
	return err
}

func (b *base) Delete(ctx context.Context, key string) error {
	_, err := do(b.f, ctx, "delete", key, func() (struct{}, error) {
		return struct{}{}, b.f.s.(store.Writer).Delete(ctx, key)
	})
	return err
}
