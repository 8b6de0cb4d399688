package diskcache

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"

	"github.com/zarrfs/zarrfs/store"
)

func (d *cached) String() string { return d.s.String() }

// Close closes the wrapped store if it is an io.Closer. (The cache's
// writes are made before the reads that fetched their values return.)
func (d *cached) Close() error {
	if c, ok := d.s.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// Stat answers from the entry of an earlier Stat on an immutable store;
// otherwise it asks the store and keeps the answer (served, with
// Options.Offline, when the store fails).
func (d *cached) Stat(ctx context.Context, key string) (store.Info, error) {
	if err := store.CheckKey(ctx, key); err != nil {
		return store.Info{}, err
	}
	path := d.c.path(d.id, key, "s")
	e := d.c.load(path, d.id, key, "s")
	if e != nil && d.trusted(key, path) {
		_, info, err := d.hit(e, store.All, false, &d.c.hits)
		return info, err
	}
	info, err := d.s.(store.Stater).Stat(ctx, key)
	h := header{Store: d.id, Key: key, Range: "s"}
	switch {
	case err == nil:
		if e != nil && !sameValue(e.info(), info) {
			d.forget(key) // what is kept of the old value (a zip archive's ranges)
		}
		headerInfo(&h, info)
		d.c.write(ctx, path, h, nil, false)
		d.checked.Store(path, struct{}{})
	case errors.Is(err, store.ErrNotExist):
		h.Missing, h.Size = true, -1
		d.c.write(ctx, path, h, nil, false)
		d.checked.Store(path, struct{}{})
	case e != nil && d.usable(ctx, err):
		d.servedOffline(key, err)
		_, info, err := d.hit(e, store.All, false, &atomic.Int64{})
		return info, err
	}
	return info, err
}

// listing runs a listing (op names it among the listings of the store)
// and keeps its answer, which it serves only when the store fails
// (Options.Offline): listings are always asked of the store.
func listing[T any](ctx context.Context, d *cached, op string, list func() (T, error)) (T, error) {
	v, err := list()
	path := d.c.path(d.id, "\x00list\x00"+op, "l")
	if err == nil {
		if b, jerr := json.Marshal(v); jerr == nil {
			d.c.write(ctx, path, header{Store: d.id, Key: "\x00list\x00" + op, Range: "l", Size: -1}, b, false)
		}
		return v, nil
	}
	if d.usable(ctx, err) {
		if e := d.c.load(path, d.id, "\x00list\x00"+op, "l"); e != nil {
			var old T
			if json.Unmarshal(e.data, &old) == nil {
				d.servedOffline("the listing "+strings.ReplaceAll(op, "\x00", " "), err)
				return old, nil
			}
		}
	}
	return v, err
}

func (d *cached) ListDir(ctx context.Context, dir string) (keys, prefixes []string, err error) {
	if err := store.CheckListDir(ctx, dir); err != nil {
		return nil, nil, err
	}
	type both struct{ Keys, Prefixes []string }
	v, err := listing(ctx, d, "dir\x00"+dir, func() (both, error) {
		k, p, err := d.s.(store.Lister).ListDir(ctx, dir)
		return both{k, p}, err
	})
	return v.Keys, v.Prefixes, err
}

func (d *cached) ListPrefix(ctx context.Context, prefix string) ([]string, error) {
	if err := store.CheckListPrefix(ctx, prefix); err != nil {
		return nil, err
	}
	return listing(ctx, d, "prefix\x00"+prefix, func() ([]string, error) {
		return d.s.(store.Lister).ListPrefix(ctx, prefix)
	})
}

func (d *cached) ListPrefixPage(ctx context.Context, prefix, startAfter string) ([]string, bool, error) {
	if err := store.CheckListPrefix(ctx, prefix); err != nil {
		return nil, false, err
	}
	type page struct {
		Keys []string
		More bool
	}
	v, err := listing(ctx, d, "page\x00"+prefix+"\x00"+startAfter, func() (page, error) {
		k, more, err := d.s.(store.PageLister).ListPrefixPage(ctx, prefix, startAfter)
		return page{k, more}, err
	})
	return v.Keys, v.More, err
}

// Set and Delete change the store, then drop the entries of key.
func (d *cached) Set(ctx context.Context, key string, value []byte) error {
	err := d.s.(store.Writer).Set(ctx, key, value)
	d.forget(key)
	return err
}

func (d *cached) Delete(ctx context.Context, key string) error {
	err := d.s.(store.Writer).Delete(ctx, key)
	d.forget(key)
	return err
}

// sameValue reports whether two Infos of a key describe the same value.
func sameValue(a, b store.Info) bool {
	return a.Size == b.Size && a.ETag == b.ETag && a.ModTime.Equal(b.ModTime)
}

// forget removes every entry of key (whatever its range).
func (d *cached) forget(key string) {
	d.checked.Clear()
	prefix := strings.TrimSuffix(filepath.Base(d.c.path(d.id, key, "")), "-") + "-"
	dir := filepath.Dir(d.c.path(d.id, key, ""))
	names, _ := os.ReadDir(dir)
	for _, n := range names {
		if strings.HasPrefix(n.Name(), prefix) && !strings.HasSuffix(n.Name(), ".lock") {
			os.Remove(filepath.Join(dir, n.Name()))
		}
	}
}
