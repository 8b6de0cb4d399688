// Package deadline is a store decorator that bounds how long any one request
// may take. A request that has not answered when its deadline passes returns
// an error matching context.DeadlineExceeded at once, even if the store
// underneath ignores its context (a hung NFS read, a server that accepts a
// connection and never answers): the caller is released and the stuck call
// finishes, or not, on its own goroutine.
//
// The decorated store keeps exactly the optional interfaces (store.Lister,
// store.Stater, store.InfoGetter, store.Writer, store.PageLister) of the
// store it wraps (store.Decorate), so callers that discover capabilities by
// type assertion see no difference; it is an io.Closer that closes the
// wrapped store. It has no store.ReaderInto or store.AllocGetter, whatever
// it wraps: those lend the caller's buffer to the store, and a stuck call
// left running after its deadline would write into it once the caller has
// reused it. Reads through it take Get and GetRange instead.
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
	return store.Decorate(&bounded{s: s, timeout: timeout}, s)
}

// bounded implements store.Full; store.Decorate exposes the optional
// interfaces the wrapped store has. Each method validates its key before
// starting a request, so an invalid key is always a *store.InvalidKeyError,
// even with a context already done.
type bounded struct {
	s       store.Store
	timeout time.Duration
}

// call runs f under a context that expires after the timeout and returns as
// soon as f does or the context is done, whichever comes first.
func call[T any](ctx context.Context, d *bounded, op string, f func(context.Context) (T, error)) (T, error) {
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

func (d *bounded) Get(ctx context.Context, key string) ([]byte, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	return call(ctx, d, "get "+key, func(ctx context.Context) ([]byte, error) { return d.s.Get(ctx, key) })
}

func (d *bounded) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, err
	}
	return call(ctx, d, "get "+key+" "+r.String(), func(ctx context.Context) ([]byte, error) {
		return d.s.GetRange(ctx, key, r)
	})
}

func (d *bounded) String() string { return d.s.String() }

// Close closes the wrapped store if it is an io.Closer.
func (d *bounded) Close() error {
	if c, ok := d.s.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (d *bounded) GetRangeInfo(ctx context.Context, key string, r store.ByteRange) ([]byte, store.Info, error) {
	return d.getInfo(ctx, key, "get "+key+" "+r.String(), func(ctx context.Context, s store.InfoGetter) ([]byte, store.Info, error) {
		return s.GetRangeInfo(ctx, key, r)
	})
}

func (d *bounded) GetIfChanged(ctx context.Context, key string, old store.Info) ([]byte, store.Info, error) {
	return d.getInfo(ctx, key, "get "+key+" if changed", func(ctx context.Context, s store.InfoGetter) ([]byte, store.Info, error) {
		return s.GetIfChanged(ctx, key, old)
	})
}

// getInfo is the read op of key that returns the value's Info too, by get.
func (d *bounded) getInfo(ctx context.Context, key, op string, get func(context.Context, store.InfoGetter) ([]byte, store.Info, error)) ([]byte, store.Info, error) {
	if err := store.ValidateKey(key); err != nil {
		return nil, store.Info{}, err
	}
	type both struct {
		b    []byte
		info store.Info
	}
	v, err := call(ctx, d, op, func(ctx context.Context) (both, error) {
		b, info, err := get(ctx, d.s.(store.InfoGetter))
		return both{b, info}, err
	})
	return v.b, v.info, err
}

func (d *bounded) ListDir(ctx context.Context, dir string) (keys, prefixes []string, err error) {
	if err := store.ValidateDir(dir); err != nil {
		return nil, nil, err
	}
	type both struct{ keys, prefixes []string }
	r, err := call(ctx, d, "list "+dir+"/", func(ctx context.Context) (both, error) {
		k, p, err := d.s.(store.Lister).ListDir(ctx, dir)
		return both{k, p}, err
	})
	return r.keys, r.prefixes, err
}

func (d *bounded) ListPrefix(ctx context.Context, prefix string) ([]string, error) {
	if err := store.ValidatePrefix(prefix); err != nil {
		return nil, err
	}
	return call(ctx, d, "list "+prefix+"*", func(ctx context.Context) ([]string, error) {
		return d.s.(store.Lister).ListPrefix(ctx, prefix)
	})
}

func (d *bounded) ListPrefixPage(ctx context.Context, prefix, startAfter string) ([]string, bool, error) {
	if err := store.ValidatePrefix(prefix); err != nil {
		return nil, false, err
	}
	type page struct {
		keys []string
		more bool
	}
	r, err := call(ctx, d, "list "+prefix+"* after "+startAfter, func(ctx context.Context) (page, error) {
		k, more, err := d.s.(store.PageLister).ListPrefixPage(ctx, prefix, startAfter)
		return page{k, more}, err
	})
	return r.keys, r.more, err
}

func (d *bounded) Stat(ctx context.Context, key string) (store.Info, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.Info{}, err
	}
	return call(ctx, d, "stat "+key, func(ctx context.Context) (store.Info, error) {
		return d.s.(store.Stater).Stat(ctx, key)
	})
}

func (d *bounded) Set(ctx context.Context, key string, value []byte) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	_, err := call(ctx, d, "set "+key, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, d.s.(store.Writer).Set(ctx, key, value)
	})
	return err
}

func (d *bounded) Delete(ctx context.Context, key string) error {
	if err := store.ValidateKey(key); err != nil {
		return err
	}
	_, err := call(ctx, d, "delete "+key, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, d.s.(store.Writer).Delete(ctx, key)
	})
	return err
}
