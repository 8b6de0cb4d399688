package http

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log"
	"net"
	nethttp "net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/deadline"
	"github.com/zarrfs/zarrfs/store/remote"
	"github.com/zarrfs/zarrfs/store/remote/remotetest"
	"github.com/zarrfs/zarrfs/store/storetest"
)

// fastRetry keeps the tests short.
var fastRetry = remote.Policy{Attempts: 4, BaseDelay: 10 * time.Millisecond, MaxDelay: 50 * time.Millisecond}

func serve(t *testing.T, srv *remotetest.Server) *Store {
	t.Helper()
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Release()
		ts.Close()
	})
	s, err := New(ts.URL+"/root.zarr", Options{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// under puts data under "root.zarr/".
func under(data map[string][]byte) map[string][]byte {
	m := map[string][]byte{}
	for k, v := range data {
		m["root.zarr/"+k] = v
	}
	return m
}

func TestConformance(t *testing.T) {
	storetest.RunReadOnly(t, func(t *testing.T, data map[string][]byte) store.Store {
		return serve(t, &remotetest.Server{Data: under(data), ModTime: time.Unix(1.7e9, 0)})
	})
}

func TestConformanceServerIgnoresRange(t *testing.T) {
	storetest.RunReadOnly(t, func(t *testing.T, data map[string][]byte) store.Store {
		return serve(t, &remotetest.Server{Data: under(data), IgnoreRange: true})
	})
}

func TestConformanceBehindDeadline(t *testing.T) {
	storetest.RunReadOnly(t, func(t *testing.T, data map[string][]byte) store.Store {
		return deadline.New(serve(t, &remotetest.Server{Data: under(data)}), 10*time.Second)
	})
}

func TestNew(t *testing.T) {
	for _, bad := range []string{"ftp://x/y", "http://", "https:///path", "::"} {
		if _, err := New(bad, Options{}); err == nil {
			t.Errorf("New(%q) succeeded", bad)
		}
	}
	s, err := New("https://user:pw@example.org/a%20b/data.zarr?sig=1#frag", Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := s.String(), "http https://example.org/a%20b/data.zarr"; got != want {
		t.Errorf("String() = %q; want %q", got, want)
	}
	if got, want := s.URL("x y/ü/.zarray"), "https://user:pw@example.org/a%20b/data.zarr/x%20y/%C3%BC/.zarray?sig=1"; got != want {
		t.Errorf("URL() = %q; want %q", got, want)
	}
}

func TestRangeRequests(t *testing.T) {
	v := bytes.Repeat([]byte("0123456789"), 100)
	srv := &remotetest.Server{Data: map[string][]byte{"root.zarr/a/c/0": v}}
	s := serve(t, srv)
	ctx := context.Background()
	for _, tt := range []struct {
		r    store.ByteRange
		hdr  string
		want []byte
	}{
		{store.SuffixRange(16), "bytes=-16", v[984:]},
		{store.Range(100, 10), "bytes=100-109", v[100:110]},
		{store.Range(990, -1), "bytes=990-", v[990:]},
	} {
		srv.Counts()
		got, err := s.GetRange(ctx, "a/c/0", tt.r)
		if err != nil || !bytes.Equal(got, tt.want) {
			t.Errorf("GetRange(%v) = %q, %v; want %q", tt.r, got, err, tt.want)
		}
		if p := srv.Paths(); len(p) != 1 || p[0] != "GET /root.zarr/a/c/0 "+tt.hdr {
			t.Errorf("GetRange(%v) sent %q; want one GET with Range %s", tt.r, p, tt.hdr)
		}
	}
	// Stat after a read needs no request.
	srv.Counts()
	if info, err := s.Stat(ctx, "a/c/0"); err != nil || info.Size != 1000 {
		t.Errorf("Stat = %+v, %v", info, err)
	}
	if c := srv.Counts(); len(c) != 0 {
		t.Errorf("Stat after a read sent %v", c)
	}
}

func TestRetriesTransient(t *testing.T) {
	srv := &remotetest.Server{Data: map[string][]byte{"root.zarr/k": []byte("value")}}
	s := serve(t, srv)
	ctx := context.Background()
	for _, status := range []int{500, 502, 503, 504, 429} {
		var n atomic.Int32
		srv.SetFault(func(*nethttp.Request, int64) remotetest.Action {
			if n.Add(1) <= 2 {
				return remotetest.Action{Status: status}
			}
			return remotetest.Action{}
		})
		got, err := s.Get(ctx, "k")
		if err != nil || string(got) != "value" {
			t.Errorf("status %d twice, then OK: %q, %v", status, got, err)
		}
		if n.Load() != 3 {
			t.Errorf("status %d twice, then OK: %d requests; want 3", status, n.Load())
		}
	}
	// Always 503: a bounded number of attempts, then the error.
	var n atomic.Int32
	srv.SetFault(func(*nethttp.Request, int64) remotetest.Action {
		n.Add(1)
		return remotetest.Action{Status: 503}
	})
	_, err := s.Get(ctx, "k")
	if err == nil || !strings.Contains(err.Error(), "503") || n.Load() != 4 {
		t.Errorf("always 503: %v after %d requests; want a 503 error after 4", err, n.Load())
	}
	// A body cut short is retried.
	n.Store(0)
	srv.SetFault(func(*nethttp.Request, int64) remotetest.Action {
		if n.Add(1) == 1 {
			return remotetest.Action{CutAfter: 2}
		}
		return remotetest.Action{}
	})
	if got, err := s.Get(ctx, "k"); err != nil || string(got) != "value" || n.Load() != 2 {
		t.Errorf("body cut short once: %q, %v after %d requests", got, err, n.Load())
	}
	// 404 and 403 are not retried.
	for _, status := range []int{404, 403} {
		n.Store(0)
		srv.SetFault(func(*nethttp.Request, int64) remotetest.Action {
			n.Add(1)
			return remotetest.Action{Status: status}
		})
		_, err := s.Get(ctx, "k")
		if n.Load() != 1 || err == nil || errors.Is(err, store.ErrNotExist) != (status == 404) {
			t.Errorf("status %d: %v after %d requests", status, err, n.Load())
		}
	}
}

func TestRetryAfterBeyondDeadline(t *testing.T) {
	srv := &remotetest.Server{Data: map[string][]byte{"root.zarr/k": []byte("value")}}
	s := serve(t, srv)
	srv.SetFault(func(*nethttp.Request, int64) remotetest.Action {
		return remotetest.Action{Status: 503, RetryAfter: "1"}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	s.retry.MaxDelay = 5 * time.Second
	// Giving up at once shows in the reason: waiting would end in the
	// context's deadline instead.
	_, err := s.Get(ctx, "k")
	if err == nil || !strings.Contains(err.Error(), "deadline is too close") {
		t.Errorf("Retry-After longer than the deadline: %v; want an error at once, saying so", err)
	}
}

func TestHangingServerTimesOut(t *testing.T) {
	srv := &remotetest.Server{Data: map[string][]byte{"root.zarr/k": []byte("value")}}
	srv.Fault = func(*nethttp.Request, int64) remotetest.Action { return remotetest.Action{Hang: true} }
	s := deadline.New(serve(t, srv), 300*time.Millisecond)
	start := time.Now()
	_, err := s.Get(context.Background(), "k")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("hanging server: %v; want DeadlineExceeded", err)
	}
	if d := time.Since(start); d > 1300*time.Millisecond {
		t.Errorf("hanging server: returned after %v", d)
	}
}

func TestSlowServerSucceeds(t *testing.T) {
	srv := &remotetest.Server{Data: map[string][]byte{"root.zarr/k": []byte("value")}}
	srv.Fault = func(*nethttp.Request, int64) remotetest.Action {
		return remotetest.Action{Delay: 100 * time.Millisecond}
	}
	s := deadline.New(serve(t, srv), time.Second)
	if got, err := s.Get(context.Background(), "k"); err != nil || string(got) != "value" {
		t.Errorf("slow server: %q, %v", got, err)
	}
}

func TestStoppedServer(t *testing.T) {
	ts := httptest.NewServer(&remotetest.Server{Data: map[string][]byte{"k": []byte("v")}})
	s, err := New(ts.URL, Options{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	ts.Close()
	start := time.Now()
	_, err = deadline.New(s, time.Second).Get(context.Background(), "k")
	if err == nil || errors.Is(err, store.ErrNotExist) {
		t.Errorf("stopped server: %v; want a network error", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("stopped server: returned after %v", d)
	}
}

func TestParseContentRange(t *testing.T) {
	for _, tt := range []struct {
		v                  string
		first, last, total int64
		ok                 bool
	}{
		{"bytes 0-9/100", 0, 9, 100, true},
		{"bytes 90-99/*", 90, 99, -1, true},
		{"bytes */100", -1, -1, 100, true},
		{"bytes 9-0/100", 0, 0, 0, false},
		{"bytes 0-100/100", 0, 0, 0, false},
		{"items 0-1/2", 0, 0, 0, false},
		{"bytes -1-2/3", 0, 0, 0, false},
		{"", 0, 0, 0, false},
	} {
		f, l, tot, err := parseContentRange(tt.v)
		if (err == nil) != tt.ok || (tt.ok && (f != tt.first || l != tt.last || tot != tt.total)) {
			t.Errorf("parseContentRange(%q) = %d, %d, %d, %v", tt.v, f, l, tot, err)
		}
	}
}

func TestHTTPS(t *testing.T) {
	srv := &remotetest.Server{Data: map[string][]byte{"x.zarr/zarr.json": []byte("{}"), "x.zarr/c/0": bytes.Repeat([]byte("ab"), 500)}}
	var n atomic.Int32
	srv.Fault = func(*nethttp.Request, int64) remotetest.Action { n.Add(1); return remotetest.Action{} }
	var conns atomic.Int32
	ts := httptest.NewUnstartedServer(srv)
	ts.Config.ConnState = func(_ net.Conn, st nethttp.ConnState) {
		if st == nethttp.StateNew {
			conns.Add(1)
		}
	}
	ts.Config.ErrorLog = log.New(io.Discard, "", 0)
	ts.StartTLS()
	defer ts.Close()
	ctx := context.Background()
	s, err := New(ts.URL+"/x.zarr", Options{Client: ts.Client(), Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, "zarr.json"); err != nil || string(got) != "{}" {
		t.Errorf("Get over HTTPS = %q, %v", got, err)
	}
	if got, err := s.GetRange(ctx, "c/0", store.SuffixRange(3)); err != nil || string(got) != "bab" {
		t.Errorf("suffix GetRange over HTTPS = %q, %v", got, err)
	}
	// The default client does not trust the test certificate: an error at
	// once, not retried.
	untrusting, err := New(ts.URL+"/x.zarr", Options{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	defer untrusting.Close()
	n.Store(0)
	conns.Store(0)
	if _, err := untrusting.Get(ctx, "zarr.json"); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("Get with an untrusted certificate: %v", err)
	}
	if n.Load() != 0 || conns.Load() != 1 {
		t.Errorf("an untrusted certificate: %d connections, %d requests; want 1 connection and no retry", conns.Load(), n.Load())
	}
}

// TestServerStoppedMidRead: the server goes away while a body is being
// sent; the read fails quickly (retries meet a closed port), well within
// the deadline, and does not hang.
func TestServerStoppedMidRead(t *testing.T) {
	started := make(chan struct{})
	release := make(chan struct{})
	ts := httptest.NewServer(nethttp.HandlerFunc(func(w nethttp.ResponseWriter, r *nethttp.Request) {
		w.Header().Set("Content-Length", "1000000")
		w.WriteHeader(200)
		w.Write(make([]byte, 1000))
		w.(nethttp.Flusher).Flush()
		select {
		case started <- struct{}{}:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(ts.Close) // after release is closed below
	defer close(release)
	s, err := New(ts.URL, Options{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		<-started
		ts.CloseClientConnections()
		ts.Listener.Close()
	}()
	start := time.Now()
	_, err = deadline.New(s, 2*time.Second).Get(context.Background(), "big")
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("server stopped mid-read: %v; want a connection error before the deadline", err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("server stopped mid-read: failed after %v", d)
	}
}

// A server that answers a quarter of requests 503 SlowDown: every read
// completes with the right bytes, the store's controller backs off, and
// the log says so once, not per request.
func TestThrottlingBacksOffAndLogsOnce(t *testing.T) {
	data := map[string][]byte{}
	for i := range 64 {
		data["root.zarr/c/"+string(rune('a'+i/26))+string(rune('a'+i%26))] = bytes.Repeat([]byte{byte(i)}, 1000+i)
	}
	srv := &remotetest.Server{Data: data}
	var n atomic.Int32
	srv.SetFault(func(*nethttp.Request, int64) remotetest.Action {
		if n.Add(1)%4 == 0 {
			return remotetest.Action{Status: 503}
		}
		return remotetest.Action{}
	})
	ts := httptest.NewServer(srv)
	defer ts.Close()
	var logs atomic.Int32
	var first atomic.Value
	s, err := New(ts.URL+"/root.zarr", Options{Retry: remote.Policy{Attempts: 20, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond},
		Logf: func(f string, a ...any) {
			logs.Add(1)
			first.CompareAndSwap(nil, f)
		}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	errs := make(chan error, len(data))
	for k, want := range data {
		go func() {
			got, err := s.Get(ctx, strings.TrimPrefix(k, "root.zarr/"))
			if err == nil && !bytes.Equal(got, want) {
				err = errors.New(k + ": wrong bytes")
			}
			errs <- err
		}()
	}
	for range data {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	st := s.ctl.Stats()
	if st.Backoffs == 0 || st.Limit >= remote.DefaultInitial {
		t.Errorf("controller after throttling: %+v; want back-offs and a limit below %d", st, remote.DefaultInitial)
	}
	if logs.Load() != 1 {
		t.Errorf("%d log lines; want 1", logs.Load())
	}
	if f, _ := first.Load().(string); !strings.Contains(f, "throttling") {
		t.Errorf("log %q", f)
	}
}
