package diskcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

// far is a fake far store: values with ETags, counting every request,
// slow when delay is set, failing when down is.
type far struct {
	mu    sync.Mutex
	m     map[string][]byte
	delay time.Duration
	down  atomic.Bool
	reqs  atomic.Int64 // requests that carried or would carry a body
	conds atomic.Int64 // conditional requests answered 304
}

func newFar(n int) *far {
	f := &far{m: map[string][]byte{}}
	for i := range n {
		f.m[fmt.Sprintf("a/c/%d", i)] = bytes.Repeat([]byte{byte(i), byte(i >> 8), 7}, 1000+i)
	}
	f.m["a/zarr.json"] = []byte(`{"zarr_format":3}`)
	return f
}

func (f *far) String() string { return "far" }

func (f *far) set(key string, v []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m[key] = v
}

func (f *far) value(ctx context.Context, key string) ([]byte, store.Info, error) {
	if err := store.CheckKey(ctx, key); err != nil {
		return nil, store.Info{}, err
	}
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	if f.down.Load() {
		return nil, store.Info{}, errors.New("far: connection refused")
	}
	f.mu.Lock()
	v, ok := f.m[key]
	f.mu.Unlock()
	if !ok {
		return nil, store.Info{}, fmt.Errorf("far: %q: %w", key, store.ErrNotExist)
	}
	return v, store.Info{Size: int64(len(v)), ETag: fmt.Sprintf(`"%08x"`, crc32.ChecksumIEEE(v))}, nil
}

func (f *far) Get(ctx context.Context, key string) ([]byte, error) {
	return f.GetRange(ctx, key, store.All)
}

func (f *far) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	b, _, err := f.GetRangeInfo(ctx, key, r)
	return b, err
}

func (f *far) GetRangeInfo(ctx context.Context, key string, r store.ByteRange) ([]byte, store.Info, error) {
	f.reqs.Add(1)
	v, info, err := f.value(ctx, key)
	if err != nil {
		return nil, info, err
	}
	s, e, err := r.Resolve(int64(len(v)))
	if err != nil {
		return nil, info, err
	}
	return bytes.Clone(v[s:e]), info, nil
}

func (f *far) GetIfChanged(ctx context.Context, key string, old store.Info) ([]byte, store.Info, error) {
	v, info, err := f.value(ctx, key)
	if err == nil && old.ETag == info.ETag {
		f.conds.Add(1)
		return nil, info, store.ErrNotModified
	}
	f.reqs.Add(1)
	return bytes.Clone(v), info, err
}

func (f *far) Stat(ctx context.Context, key string) (store.Info, error) {
	f.reqs.Add(1)
	_, info, err := f.value(ctx, key)
	return info, err
}

// open opens a cache on dir (waiting for its first scan) and wraps s.
func open(t *testing.T, dir string, s store.Store, opts Options) (*Cache, store.Store) {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	c, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	<-c.scanned
	return c, c.Wrap(s, "far://x")
}

// readAll reads n values of f through s, whole, then (once written) a
// range of each, then a missing key; and waits for the writes.
func readAll(t *testing.T, s store.Store, f *far, n int) {
	t.Helper()
	ctx := context.Background()
	want := func(key string) []byte {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.m[key]
	}
	for i := range n {
		key := fmt.Sprintf("a/c/%d", i)
		if b, err := s.Get(ctx, key); err != nil || !bytes.Equal(b, want(key)) {
			t.Fatalf("Get(%q) = %d bytes, %v; want %d bytes", key, len(b), err, len(want(key)))
		}
	}
	for i := range n {
		key := fmt.Sprintf("a/c/%d", i)
		r, err := s.GetRange(ctx, key, store.Range(10, 20))
		if err != nil || !bytes.Equal(r, want(key)[10:30]) {
			t.Fatalf("GetRange(%q, 10-29) = %v, %v", key, r, err)
		}
	}
	if _, err := s.Get(ctx, "a/c/missing"); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("Get of a missing key: %v; want ErrNotExist", err)
	}
}
