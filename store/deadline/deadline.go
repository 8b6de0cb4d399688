// Package deadline is a store decorator that bounds how long any one request
// may take. A request that has not answered when its deadline passes returns
// an error matching context.DeadlineExceeded at once, even if the store
// underneath ignores its context (a hung NFS read, a server that accepts a
// connection and never answers): the caller is released and the stuck call
// finishes, or not, on its own goroutine.
//
// The decorated store keeps exactly the optional interfaces (store.Lister,
// store.Stater, store.Writer, io.Closer) of the store it wraps, so callers that
// discover capabilities by type assertion see no difference.
package deadline

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

// New returns s with every request bounded by timeout. A timeout of zero or
// less returns s itself.
func New(s store.Store, timeout time.Duration) store.Store {
	if timeout <= 0 {
		return s
	}
	d := &base{s: s, timeout: timeout}
	_, isL := s.(store.Lister)
	_, isS := s.(store.Stater)
	_, isW := s.(store.Writer)
	switch {
	case isL && isS && isW:
		return struct {
			*base
			lister
			stater
			writer
		}{d, lister{d}, stater{d}, writer{d}}
	case isL && isS:
		return struct {
			*base
			lister
			stater
		}{d, lister{d}, stater{d}}
	case isL && isW:
		return struct {
			*base
			lister
			writer
		}{d, lister{d}, writer{d}}
	case isS && isW:
		return struct {
			*base
			stater
			writer
		}{d, stater{d}, writer{d}}
	case isL:
		return struct {
			*base
			lister
		}{d, lister{d}}
	case isS:
		return struct {
			*base
			stater
		}{d, stater{d}}
	case isW:
		return struct {
			*base
			writer
		}{d, writer{d}}
	default:
		return d
	}
}

// base implements store.Store and io.Closer for every combination. Each
// method validates its key before starting a request, so an invalid key is
// always a *store.InvalidKeyError, even with a context already done.
type base struct {
	s       store.Store
	timeout time.Duration
}

// call runs f under a context that expires after the timeout and returns as
// soon as f does or the context is done, whichever comes first.
func call[T any](ctx context.Context, d *base, op string, f func(context.Context) (T, error)) (T, error) {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1) // buffered: a late answer never blocks its goroutine
	go func() {
		v, err := f(ctx)
		ch <- result{v, err}
	}()
	select {
	case r := <-ch:
		return r.v, r.err
	case <-ctx.Done():
		var zero T
		err := ctx.Err()
		if err == context.DeadlineExceeded {
			return zero, fmt.Errorf("%s: %s: no answer within %v: %w", d.s, op, d.timeout, err)
		}
		return zero, fmt.Errorf("%s: %s: %w", d.s, op, err)
	}
}

func (d *base) Get(ctx context.Context, key string) ([]byte, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	return call(ctx, d, "get "+key, func(ctx context.Context) ([]byte, error) { return d.s.Get(ctx, key) })
}

func (d *base) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	return call(ctx, d, "get "+key+" "+r.String(), func(ctx context.Context) ([]byte, error) {
		return d.s.GetRange(ctx, key, r)
	})
}

func (d *base) String() string { return d.s.String() }

// Close closes the wrapped store if it is an io.Closer.
func (d *base) Close() error {
	if c, ok := d.s.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Unwrap returns the decorated store.
func (d *base) Unwrap() store.Store { return d.s }

type lister struct{ d *base }

func (l lister) ListDir(ctx context.Context, dir string) (keys, prefixes []string, err error) {
	if err := store.ValidateDir(dir); err != nil {
		return nil, nil, err
	}
	type both struct{ keys, prefixes []string }
	r, err := call(ctx, l.d, "list "+dir+"/", func(ctx context.Context) (both, error) {
		k, p, err := l.d.s.(store.Lister).ListDir(ctx, dir)
		return both{k, p}, err
	})
	return r.keys, r.prefixes, err
}

func (l lister) ListPrefix(ctx context.Context, prefix string) ([]string, error) {
	if err := store.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	return call(ctx, l.d, "list "+prefix+"*", func(ctx context.Context) ([]string, error) {
		return l.d.s.(store.Lister).ListPrefix(ctx, prefix)
	})
}

type stater struct{ d *base }

func (s stater) Stat(ctx context.Context, key string) (store.Info, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.Info{}, err
	}
	return call(ctx, s.d, "stat "+key, func(ctx context.Context) (store.Info, error) {
		return s.d.s.(store.Stater).Stat(ctx, key)
	})
}

type writer struct{ d *base }

func (w writer) Set(ctx context.Context, key string, value []byte) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	_, err := call(ctx, w.d, "set "+key, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, w.d.s.(store.Writer).Set(ctx, key, value)
	})
	return err
}

func (w writer) Delete(ctx context.Context, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	_, err := call(ctx, w.d, "delete "+key, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, w.d.s.(store.Writer).Delete(ctx, key)
	})
	return err
}
