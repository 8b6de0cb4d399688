package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/deadline"
	"github.com/zarrfs/zarrfs/store/remote"
	"github.com/zarrfs/zarrfs/store/remote/remotetest"
	"github.com/zarrfs/zarrfs/store/s3/s3test"
	"github.com/zarrfs/zarrfs/store/storetest"
)

var fastRetry = remote.Policy{Attempts: 4, BaseDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond}

var buckets atomic.Int64

// newBucket makes a fresh bucket on srv and returns its name.
func newBucket(srv *s3test.Server) string {
	name := fmt.Sprintf("b%d-%d", os.Getpid(), buckets.Add(1))
	srv.MakeBucket(name)
	return name
}

func open(t testing.TB, endpoint, bucket, prefix string, opts Options) *Store {
	t.Helper()
	opts.Endpoint = endpoint
	opts.AccessKey, opts.SecretKey = s3test.AccessKey, s3test.SecretKey
	if opts.Retry == (remote.Policy{}) {
		opts.Retry = fastRetry
	}
	s, err := New(bucket, prefix, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	srv := s3test.Start(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		return open(t, srv.Endpoint, newBucket(srv), "", Options{})
	})
}

func TestConformancePrefix(t *testing.T) {
	srv := s3test.Start(t)
	storetest.Run(t, func(t *testing.T) store.Store {
		b := newBucket(srv)
		// A sibling that shares the prefix as a string must not show.
		other := open(t, srv.Endpoint, b, "", Options{})
		if err := other.Set(context.Background(), "data.zarr-old/zarr.json", []byte("x")); err != nil {
			t.Fatal(err)
		}
		return open(t, srv.Endpoint, b, "data.zarr", Options{ListPageSize: 2})
	})
}

func TestParseURL(t *testing.T) {
	for _, tt := range []struct{ in, bucket, prefix string }{
		{"s3://b", "b", ""},
		{"s3://b/", "b", ""},
		{"s3://b/x/y.zarr/", "b", "x/y.zarr"},
		{"S3://b/p", "b", "p"},
	} {
		b, p, err := ParseURL(tt.in)
		if err != nil || b != tt.bucket || p != tt.prefix {
			t.Errorf("ParseURL(%q) = %q, %q, %v", tt.in, b, p, err)
		}
	}
	for _, bad := range []string{"s3://", "s3:///x", "http://b/x", "s3://b/a//c", "s3://b/../x"} {
		if _, _, err := ParseURL(bad); err == nil {
			t.Errorf("ParseURL(%q) succeeded", bad)
		}
	}
}

func TestNewEndpoint(t *testing.T) {
	for _, bad := range []string{"ftp://h", "http://h/path", "http://"} {
		if _, err := New("b", "", Options{Endpoint: bad}); err == nil {
			t.Errorf("endpoint %q accepted", bad)
		}
	}
	s, err := New("b", "p", Options{Endpoint: "http://127.0.0.1:9"})
	if err != nil || s.String() != "s3 s3://b/p at http://127.0.0.1:9" {
		t.Errorf("New = %v, %v", s, err)
	}
}

func TestReadOnly(t *testing.T) {
	s, err := New("b", "", Options{Endpoint: "http://127.0.0.1:9", ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Set(context.Background(), "k", nil); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Set on a read-only store: %v", err)
	}
	if err := s.Delete(context.Background(), "k"); !errors.Is(err, store.ErrReadOnly) {
		t.Errorf("Delete on a read-only store: %v", err)
	}
}

func TestMissingBucket(t *testing.T) {
	srv := s3test.Start(t)
	s := open(t, srv.Endpoint, "no-such-bucket", "", Options{})
	_, err := s.Get(context.Background(), "zarr.json")
	if err == nil || errors.Is(err, store.ErrNotExist) || !strings.Contains(err.Error(), "does not exist") {
		t.Errorf("Get in a missing bucket: %v; want an error saying the bucket does not exist", err)
	}
}

func TestWrongCredentials(t *testing.T) {
	srv := s3test.Start(t)
	b := newBucket(srv)
	s, err := New(b, "", Options{Endpoint: srv.Endpoint, AccessKey: s3test.AccessKey, SecretKey: "wrong", Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	_, err = s.Get(context.Background(), "zarr.json")
	if err == nil || errors.Is(err, store.ErrNotExist) {
		t.Errorf("Get with a wrong secret: %v", err)
	}
}

func TestListPagination(t *testing.T) {
	srv := s3test.Start(t)
	s := open(t, srv.Endpoint, newBucket(srv), "p", Options{ListPageSize: 3})
	ctx := context.Background()
	var want []string
	for i := range 20 {
		k := fmt.Sprintf("c/%02d", i)
		want = append(want, k)
		if err := s.Set(ctx, k, []byte{byte(i)}); err != nil {
			t.Fatal(err)
		}
		if err := s.Set(ctx, fmt.Sprintf("d%02d/x", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.ListPrefix(ctx, "c/")
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("ListPrefix over 7 pages = %q, %v", got, err)
	}
	keys, prefixes, err := s.ListDir(ctx, "")
	if err != nil || len(keys) != 0 || len(prefixes) != 21 {
		t.Errorf("ListDir over pages = %q, %q, %v; want 21 prefixes", keys, prefixes, err)
	}
}

// proxied returns a store reaching srv through a fault-injecting proxy.
func proxied(t *testing.T, srv *s3test.Server, p *remotetest.Proxy, bucket string) *Store {
	p.Target = srv.Endpoint
	ts := httptest.NewServer(p)
	t.Cleanup(func() {
		p.Release()
		ts.Close()
	})
	return open(t, ts.URL, bucket, "", Options{})
}

func TestFaults(t *testing.T) {
	srv := s3test.Start(t)
	b := newBucket(srv)
	direct := open(t, srv.Endpoint, b, "", Options{})
	ctx := context.Background()
	value := bytes.Repeat([]byte("zarr"), 1000)
	if err := direct.Set(ctx, "k", value); err != nil {
		t.Fatal(err)
	}
	p := &remotetest.Proxy{}
	s := proxied(t, srv, p, b)

	t.Run("503ThenOK", func(t *testing.T) {
		var n atomic.Int32
		p.SetFault(func(*nethttp.Request, int64) remotetest.Action {
			if n.Add(1) <= 2 {
				return remotetest.Action{Status: 503}
			}
			return remotetest.Action{}
		})
		defer p.SetFault(nil)
		got, err := s.GetRange(ctx, "k", store.SuffixRange(8))
		if err != nil || !bytes.Equal(got, value[len(value)-8:]) || n.Load() != 3 {
			t.Errorf("503 twice then OK: %q, %v after %d requests", got, err, n.Load())
		}
	})
	t.Run("Always503", func(t *testing.T) {
		var n atomic.Int32
		p.SetFault(func(*nethttp.Request, int64) remotetest.Action {
			n.Add(1)
			return remotetest.Action{Status: 503}
		})
		defer p.SetFault(nil)
		_, err := s.Get(ctx, "k")
		if err == nil || n.Load() != int32(fastRetry.Attempts) {
			t.Errorf("always 503: %v after %d requests; want an error after %d", err, n.Load(), fastRetry.Attempts)
		}
	})
	t.Run("Hang", func(t *testing.T) {
		p.SetFault(func(*nethttp.Request, int64) remotetest.Action { return remotetest.Action{Hang: true} })
		defer p.SetFault(nil)
		start := time.Now()
		_, err := deadline.New(s, 500*time.Millisecond).Get(ctx, "k")
		if !errors.Is(err, context.DeadlineExceeded) || time.Since(start) > 1500*time.Millisecond {
			t.Errorf("hanging server: %v after %v", err, time.Since(start))
		}
	})
	t.Run("Slow", func(t *testing.T) {
		p.SetFault(func(*nethttp.Request, int64) remotetest.Action {
			return remotetest.Action{Delay: 200 * time.Millisecond}
		})
		defer p.SetFault(nil)
		got, err := deadline.New(s, 2*time.Second).Get(ctx, "k")
		if err != nil || !bytes.Equal(got, value) {
			t.Errorf("slow server: %d bytes, %v", len(got), err)
		}
	})
	t.Run("ServerStopped", func(t *testing.T) {
		srv.Stop()
		defer srv.Restart()
		start := time.Now()
		_, err := deadline.New(direct, time.Second).Get(ctx, "k")
		if err == nil || time.Since(start) > 2*time.Second {
			t.Errorf("stopped server: %v after %v", err, time.Since(start))
		}
		srv.Restart()
		if got, err := direct.Get(ctx, "k"); err != nil || !bytes.Equal(got, value) {
			t.Errorf("after restart: %d bytes, %v", len(got), err)
		}
	})
}

// TestPosixLayout checks that a value written through the store is a file
// in the backend's directory, as a peer reading the directory sees it.
func TestPosixLayout(t *testing.T) {
	srv := s3test.Start(t)
	b := newBucket(srv)
	s := open(t, srv.Endpoint, b, "x.zarr", Options{})
	if err := s.Set(context.Background(), "a/zarr.json", []byte(`{"zarr_format":3}`)); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(srv.Dir, b, "x.zarr", "a", "zarr.json"))
	if err != nil || string(got) != `{"zarr_format":3}` {
		t.Errorf("file in the backend: %q, %v", got, err)
	}
}

// TestStatRemembered: Stat after a read needs no request; a write through
// the store is seen at once.
func TestStatRemembered(t *testing.T) {
	srv := s3test.Start(t)
	b := newBucket(srv)
	p := &remotetest.Proxy{}
	s := proxied(t, srv, p, b)
	ctx := context.Background()
	if err := s.Set(ctx, "k", bytes.Repeat([]byte("x"), 100)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.GetRange(ctx, "k", store.SuffixRange(10)); err != nil {
		t.Fatal(err)
	}
	p.Counts()
	if info, err := s.Stat(ctx, "k"); err != nil || info.Size != 100 || info.ModTime.IsZero() {
		t.Errorf("Stat after a suffix read = %+v, %v", info, err)
	}
	if c := p.Counts(); len(c) != 0 {
		t.Errorf("Stat after a read sent %v", c)
	}
	if err := s.Set(ctx, "k", []byte("short")); err != nil {
		t.Fatal(err)
	}
	if info, err := s.Stat(ctx, "k"); err != nil || info.Size != 5 {
		t.Errorf("Stat after Set = %+v, %v; want size 5", info, err)
	}
	if err := s.Delete(ctx, "k"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Stat(ctx, "k"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("Stat after Delete: %v", err)
	}
}
