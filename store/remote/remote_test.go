package remote

import (
	"bytes"
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/memory"
)

var fast = Policy{Attempts: 4, BaseDelay: time.Millisecond, MaxDelay: 5 * time.Millisecond}

func TestIsTransient(t *testing.T) {
	for _, tt := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errors.New("x"), false},
		{store.ErrNotExist, false},
		{Transient(errors.New("503")), true},
		{fmt.Errorf("get: %w", io.ErrUnexpectedEOF), true},
		{&url.Error{Op: "Get", URL: "u", Err: syscall.ECONNRESET}, true},
		{&url.Error{Op: "Get", URL: "u", Err: syscall.ECONNREFUSED}, true},
		{&net.OpError{Op: "dial", Err: errors.New("no route")}, true},
		{&url.Error{Op: "Get", URL: "u", Err: x509.UnknownAuthorityError{}}, false},
		{context.DeadlineExceeded, false},
		{context.Canceled, false},
	} {
		if got := IsTransient(tt.err); got != tt.want {
			t.Errorf("IsTransient(%v) = %v; want %v", tt.err, got, tt.want)
		}
	}
}

func TestDo(t *testing.T) {
	ctx := context.Background()
	n := 0
	err := Do(ctx, fast, func(context.Context) error {
		n++
		if n < 3 {
			return Transient(errors.New("busy"))
		}
		return nil
	})
	if err != nil || n != 3 {
		t.Errorf("two transient failures, then success: %v after %d attempts", err, n)
	}
	n = 0
	err = Do(ctx, fast, func(context.Context) error { n++; return Transient(errors.New("busy")) })
	if err == nil || n != 4 {
		t.Errorf("always transient: %v after %d attempts; want an error after 4", err, n)
	}
	n = 0
	err = Do(ctx, fast, func(context.Context) error { n++; return store.ErrNotExist })
	if !errors.Is(err, store.ErrNotExist) || n != 1 {
		t.Errorf("not transient: %v after %d attempts; want ErrNotExist after 1", err, n)
	}
	// Retry-After is honoured, up to MaxDelay.
	n = 0
	start := time.Now()
	err = Do(ctx, Policy{Attempts: 2, BaseDelay: time.Millisecond, MaxDelay: 80 * time.Millisecond}, func(context.Context) error {
		n++
		if n == 1 {
			return &TransientError{Err: errors.New("slow down"), After: time.Hour}
		}
		return nil
	})
	// Capped: it waited about MaxDelay, not the hour asked for (the upper
	// bound only has to tell the two apart on a loaded machine).
	if d := time.Since(start); err != nil || d < 70*time.Millisecond || d > 30*time.Second {
		t.Errorf("Retry-After capped at MaxDelay: %v after %v", err, d)
	}
	// A wait that would end past the deadline is not started: Do gives up
	// after the first attempt and says why, rather than sleeping a second
	// into a context that has 50 ms left.
	dctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	calls := 0
	err = Do(dctx, Policy{Attempts: 5, BaseDelay: time.Second, MaxDelay: time.Second}, func(context.Context) error {
		calls++
		return Transient(errors.New("busy"))
	})
	if err == nil || calls != 1 || !strings.Contains(err.Error(), "deadline is too close") {
		t.Errorf("deadline too close: %v after %d calls; want one call and the reason", err, calls)
	}
	// A cancelled context stops at once.
	cctx, cancel2 := context.WithCancel(ctx)
	cancel2()
	if err := Do(cctx, fast, func(context.Context) error { t.Error("called"); return nil }); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// counting counts GetRange calls.
type counting struct {
	store.Store
	n int
}

func (c *counting) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	c.n++
	return c.Store.GetRange(ctx, key, r)
}

func TestReaderAt(t *testing.T) {
	ctx := context.Background()
	mem := memory.New()
	v := make([]byte, TailSize+1000)
	for i := range v {
		v[i] = byte(i * 7)
	}
	if err := mem.Set(ctx, "a.zip", v); err != nil {
		t.Fatal(err)
	}
	c := &counting{Store: mem}
	r := NewReaderAt(ctx, c, "a.zip", int64(len(v)))
	buf := make([]byte, 100)
	// Many reads near the end: one request.
	for _, off := range []int64{int64(len(v)) - 100, int64(len(v)) - 5000, 2000} {
		if n, err := r.ReadAt(buf, off); n != 100 || err != nil || !bytes.Equal(buf, v[off:off+100]) {
			t.Errorf("ReadAt(%d) = %d, %v", off, n, err)
		}
	}
	if c.n != 1 {
		t.Errorf("three reads in the tail sent %d requests; want 1", c.n)
	}
	if n, err := r.ReadAt(buf, 10); n != 100 || err != nil || !bytes.Equal(buf, v[10:110]) || c.n != 2 {
		t.Errorf("ReadAt(10) = %d, %v after %d requests", n, err, c.n)
	}
	// Small reads elsewhere come from 256 KiB blocks; long reads go direct.
	if n, err := r.ReadAt(buf, 5000); n != 100 || err != nil || !bytes.Equal(buf, v[5000:5100]) || c.n != 2 {
		t.Errorf("ReadAt(5000) in the same block = %d, %v after %d requests; want no new request", n, err, c.n)
	}
	across := make([]byte, 2000)
	if n, err := r.ReadAt(across, BlockSize-1000); n != 2000 || err != nil || !bytes.Equal(across, v[BlockSize-1000:BlockSize+1000]) {
		t.Errorf("ReadAt across two blocks = %d, %v", n, err)
	}
	long := make([]byte, SmallRead)
	c.n = 0
	if n, err := r.ReadAt(long, 100); n != len(long) || err != nil || !bytes.Equal(long, v[100:100+SmallRead]) || c.n != 1 {
		t.Errorf("long ReadAt = %d, %v after %d requests", n, err, c.n)
	}
	if n, err := r.ReadAt(buf, int64(len(v))-10); n != 10 || err != io.EOF {
		t.Errorf("ReadAt at the end = %d, %v; want 10, EOF", n, err)
	}
	if _, err := r.ReadAt(buf, int64(len(v))); err != io.EOF {
		t.Errorf("ReadAt past the end: %v", err)
	}
	// A value shorter than its declared size is an error, not short data.
	short := NewReaderAt(ctx, mem, "a.zip", int64(len(v))+50)
	if _, err := short.ReadAt(buf, int64(len(v))-20); err == nil {
		t.Errorf("reading a value shorter than declared: no error")
	}
}
