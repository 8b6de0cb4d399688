package diskcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

// trusted reports whether the entry of key at path may be served without
// asking the store.
func (d *cached) trusted(key, path string) bool {
	if d.c.opts.Live {
		return false
	}
	if d.c.opts.Revalidate == nil || !d.c.opts.Revalidate(key) {
		return true
	}
	_, ok := d.checked.Load(path)
	return ok
}

// usable reports whether err from the store leaves the cache free to serve
// what it holds (Options.Offline): the store failed, rather than said the
// key is missing or the caller gave up.
func (d *cached) usable(ctx context.Context, err error) bool {
	if !d.c.opts.Offline || err == nil || ctx.Err() != nil || errors.Is(err, store.ErrNotExist) {
		return false
	}
	var ike *store.InvalidKeyError
	return !errors.As(err, &ike)
}

// servedOffline counts and logs (once per Cache) a read of what (a key,
// or a listing's description) served because the store failed with err.
func (d *cached) servedOffline(what string, err error) {
	d.c.offline.Add(1)
	if !d.c.loggedOff.Swap(true) {
		if !strings.HasPrefix(what, "the listing") {
			what = strconv.Quote(what)
		}
		d.c.logf("%s does not answer (%v): serving %s and what else the disk cache %s holds (--cache-offline)", d.s, err, what, d.c.dir)
	}
}

// hit counts a read served from e and returns its bytes for the caller
// (the range r of a whole value's entry when whole is set).
func (d *cached) hit(e *entry, r store.ByteRange, whole bool, counter *atomic.Int64) ([]byte, store.Info, error) {
	counter.Add(1)
	if e.Missing {
		return nil, store.Info{}, fmt.Errorf("%s: %w (disk cache)", d.s, store.ErrNotExist)
	}
	b := e.data
	if whole {
		start, end, err := r.Resolve(int64(len(b)))
		if err != nil {
			return nil, store.Info{}, err
		}
		b = b[start:end]
	}
	d.c.diskBytes.Add(int64(len(b)))
	return b, e.info(), nil
}

// read is GetRangeInfo through the cache.
func (d *cached) read(ctx context.Context, key string, r store.ByteRange) ([]byte, store.Info, error) {
	if err := store.CheckKey(ctx, key); err != nil {
		return nil, store.Info{}, err
	}
	if _, _, err := r.Resolve(1 << 62); err != nil {
		return nil, store.Info{}, fmt.Errorf("%s: get %s: %w", d.s, key, err)
	}
	tag := rangeTag(r)
	path := d.c.path(d.id, key, tag)
	e := d.c.load(path, d.id, key, tag)
	if e != nil && d.trusted(key, path) {
		return d.hit(e, r, false, &d.c.hits)
	}
	ig, _ := d.s.(store.InfoGetter)
	if e == nil && tag != "a" {
		// A whole value's entry serves any range of it (once
		// revalidated, when it must be).
		wpath := d.c.path(d.id, key, "a")
		if w := d.c.load(wpath, d.id, key, "a"); w != nil {
			if d.trusted(key, wpath) {
				return d.hit(w, r, true, &d.c.hits)
			}
			if ig != nil && !w.Missing && w.info().Validates() {
				b, info, err := d.revalidate(ctx, ig, key, wpath, w)
				if err != nil {
					return nil, info, err
				}
				start, end, err := r.Resolve(int64(len(b)))
				if err != nil {
					return nil, info, err
				}
				return b[start:end], info, nil
			}
		}
	}
	if e != nil && tag == "a" && !e.Missing && e.info().Validates() && ig != nil {
		return d.revalidate(ctx, ig, key, path, e)
	}
	if e != nil && !e.Missing && e.info().Validates() && ig != nil && 0 <= e.Size && e.Size <= maxRevalidate {
		// A range of a small value (a metadata document, read as its
		// first MaxDocumentSize bytes): asked for as a whole value, which
		// then replaces the whole value's entry.
		b, info, err := ig.GetIfChanged(ctx, key, e.info())
		switch {
		case errors.Is(err, store.ErrNotModified):
			d.checked.Store(path, struct{}{})
			return d.hit(e, r, false, &d.c.revalidated)
		case err == nil:
			d.forget(key) // other ranges of the old value too
			d.c.misses.Add(1)
			d.c.storeBytes.Add(int64(len(b)))
			h := header{Store: d.id, Key: key, Range: "a"}
			headerInfo(&h, info)
			wpath := d.c.path(d.id, key, "a")
			d.c.write(ctx, wpath, h, b, false)
			d.checked.Store(wpath, struct{}{})
			os.Remove(path)
			start, end, err := r.Resolve(int64(len(b)))
			if err != nil {
				return nil, info, err
			}
			return b[start:end], info, nil
		case d.usable(ctx, err):
			d.servedOffline(key, err)
			return d.hit(e, r, false, &atomic.Int64{})
		case errors.Is(err, store.ErrNotExist):
			d.c.misses.Add(1)
			os.Remove(path)
			return nil, info, err
		}
		return nil, info, err
	}
	b, info, err := d.fetch(ctx, key, r, path, tag, e == nil)
	if err != nil && e != nil && d.usable(ctx, err) {
		d.servedOffline(key, err)
		return d.hit(e, r, false, &atomic.Int64{})
	}
	return b, info, err
}

// revalidate asks the store whether the value of e changed: 304 serves e,
// a new value replaces it.
func (d *cached) revalidate(ctx context.Context, ig store.InfoGetter, key, path string, e *entry) ([]byte, store.Info, error) {
	b, info, err := ig.GetIfChanged(ctx, key, e.info())
	switch {
	case errors.Is(err, store.ErrNotModified):
		d.checked.Store(path, struct{}{})
		return d.hit(e, store.All, false, &d.c.revalidated)
	case err == nil:
		d.forget(key) // ranges of the old value too
		d.checked.Store(path, struct{}{})
		d.c.misses.Add(1)
		d.c.storeBytes.Add(int64(len(b)))
		h := header{Store: d.id, Key: key, Range: "a"}
		headerInfo(&h, info)
		d.c.write(ctx, path, h, b, false)
		return b, info, nil
	case errors.Is(err, store.ErrNotExist):
		d.c.misses.Add(1)
		os.Remove(path)
		return nil, info, err
	case d.usable(ctx, err):
		d.servedOffline(key, err)
		return d.hit(e, store.All, false, &atomic.Int64{})
	}
	return nil, info, err
}

// fetched is what one fetch of an entry returns to all who waited for it.
type fetched struct {
	b    []byte
	info store.Info
	err  error
}

// fetch reads the range r of key from the store and keeps it at path. One
// fetch of an entry runs at a time in the process (singleflight) and, with
// the entry's lock, across the processes sharing the folder: a waiter
// that finds the entry written when it gets the lock reads that (when
// recheck says the entry was missing before: a stale entry being replaced
// is not taken for the new one).
func (d *cached) fetch(ctx context.Context, key string, r store.ByteRange, path, tag string, recheck bool) ([]byte, store.Info, error) {
	v, _, shared := d.c.fetches.Do(path, func() (any, error) {
		var l *lockFile
		if !d.c.noWrite.Load() {
			var err error
			l, err = lock(ctx, d.c.root, path, true)
			if err != nil && ctx.Err() != nil {
				return fetched{err: err}, nil
			}
			if l != nil {
				defer l.unlock()
			}
			if recheck && l != nil {
				if e := d.c.load(path, d.id, key, tag); e != nil && d.trusted(key, path) {
					b, info, err := d.hit(e, r, false, &d.c.hits)
					return fetched{b, info, err}, nil
				}
			}
		}
		var f fetched
		start := time.Now()
		if ig, ok := d.s.(store.InfoGetter); ok {
			f.b, f.info, f.err = ig.GetRangeInfo(ctx, key, r)
		} else {
			f.b, f.err = d.s.GetRange(ctx, key, r)
			f.info.Size = -1
		}
		took := time.Since(start)
		d.c.misses.Add(1)
		h := header{Store: d.id, Key: key, Range: tag}
		switch {
		case f.err == nil:
			d.c.storeBytes.Add(int64(len(f.b)))
			headerInfo(&h, f.info)
			d.checked.Store(path, struct{}{})
			d.c.keep(ctx, path, h, f.b, l != nil, took)
		case errors.Is(f.err, store.ErrNotExist):
			h.Missing, h.Size = true, -1
			d.c.write(ctx, path, h, nil, l != nil)
			d.checked.Store(path, struct{}{})
		}
		return f, nil
	})
	f := v.(fetched)
	if shared && f.b != nil {
		f.b = bytes.Clone(f.b) // each caller owns what it gets
	}
	return f.b, f.info, f.err
}

func (d *cached) Get(ctx context.Context, key string) ([]byte, error) {
	b, _, err := d.read(ctx, key, store.All)
	return b, err
}

func (d *cached) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	b, _, err := d.read(ctx, key, r)
	return b, err
}

func (d *cached) GetRangeInfo(ctx context.Context, key string, r store.ByteRange) ([]byte, store.Info, error) {
	return d.read(ctx, key, r)
}

// GetIfChanged asks the store (a caller holding an older value of key
// wants to know it is current); a new value replaces the entry. When the
// store fails (Options.Offline), the entry answers: not modified when it
// is the value old describes, else its bytes.
func (d *cached) GetIfChanged(ctx context.Context, key string, old store.Info) ([]byte, store.Info, error) {
	if err := store.CheckKey(ctx, key); err != nil {
		return nil, store.Info{}, err
	}
	path := d.c.path(d.id, key, "a")
	b, info, err := d.s.(store.InfoGetter).GetIfChanged(ctx, key, old)
	switch {
	case err == nil:
		d.c.misses.Add(1)
		d.c.storeBytes.Add(int64(len(b)))
		h := header{Store: d.id, Key: key, Range: "a"}
		headerInfo(&h, info)
		d.c.write(ctx, path, h, b, false)
	case d.usable(ctx, err):
		if e := d.c.load(path, d.id, key, "a"); e != nil && !e.Missing {
			d.servedOffline(key, err)
			if ei := e.info(); sameValue(ei, old) {
				return nil, ei, store.ErrNotModified
			}
			d.c.diskBytes.Add(int64(len(e.data)))
			return e.data, e.info(), nil
		}
	}
	return b, info, err
}
