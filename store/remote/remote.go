// Package remote holds what the network stores (store/http, store/s3) share:
// the checks before a GET (BeforeGet), retrying transient failures with
// bounded exponential backoff inside the caller's deadline, a controller of
// the requests in flight that adapts to the store (Controller), what answers
// said of keys (Infos), an io.ReaderAt over a stored value read with range
// requests (so that a .zip archive on a web server or in a bucket can be
// opened by package zip), and the HTTP transport both use by default.
package remote

import (
	"container/list"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/zarrfs/zarrfs/store"
)

// TransientError marks a failure worth trying again: a connection refused
// or reset, a body cut short, a 5xx answer, throttling. After is how long
// the server asked the client to wait (Retry-After), zero when it did not
// say; Throttled says the server asked for fewer requests (HTTP 429, 503,
// S3 SlowDown), which a Controller answers by cutting its limit.
type TransientError struct {
	Err       error
	After     time.Duration
	Throttled bool
}

func (e *TransientError) Error() string { return e.Err.Error() }
func (e *TransientError) Unwrap() error { return e.Err }

// Transient wraps err as a TransientError (nil stays nil).
func Transient(err error) error {
	if err == nil {
		return nil
	}
	return &TransientError{Err: err}
}

// IsTransient reports whether err is a TransientError or a network error
// that another attempt may not meet: a connection refused, reset or
// aborted, a broken pipe, an early end of a response body, or a network
// timeout of one attempt while the caller's context is still live.
func IsTransient(err error) bool {
	var te *TransientError
	switch {
	case err == nil:
		return false
	case errors.As(err, &te):
		return true
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return false
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, syscall.ECONNABORTED), errors.Is(err, syscall.EPIPE):
		return true
	}
	// Certificate and TLS failures come wrapped in net.Error-like types
	// (*url.Error) but will not go away on their own.
	var (
		unknownCA  x509.UnknownAuthorityError
		invalid    x509.CertificateInvalidError
		hostname   x509.HostnameError
		recordHdr  tls.RecordHeaderError
		verifyErr  *tls.CertificateVerificationError
		alertError tls.AlertError
	)
	if errors.As(err, &unknownCA) || errors.As(err, &invalid) || errors.As(err, &hostname) ||
		errors.As(err, &recordHdr) || errors.As(err, &verifyErr) || errors.As(err, &alertError) {
		return false
	}
	var ne net.Error
	return errors.As(err, &ne)
}

// Policy says how often and how patiently to retry.
type Policy struct {
	// Attempts is the most attempts made for one request, the first
	// included; 0 means DefaultAttempts, 1 disables retries.
	Attempts int
	// BaseDelay is the wait before the second attempt; each later wait
	// doubles, up to MaxDelay, with random jitter of up to half of it.
	BaseDelay, MaxDelay time.Duration
}

// Defaults for Policy.
const (
	DefaultAttempts  = 5
	DefaultBaseDelay = 100 * time.Millisecond
	DefaultMaxDelay  = 2 * time.Second
)

func (p Policy) withDefaults() Policy {
	p.Attempts = positiveOr(p.Attempts, DefaultAttempts)
	p.BaseDelay = positiveOr(p.BaseDelay, DefaultBaseDelay)
	p.MaxDelay = positiveOr(p.MaxDelay, DefaultMaxDelay)
	return p
}

// positiveOr returns v, or def when v is not positive (an option left unset).
func positiveOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// Do calls op until it succeeds, fails with an error that is not transient,
// has been tried p.Attempts times, or ctx is done. It never sleeps past
// ctx's deadline: when the next wait would end after it, Do gives up at
// once with the last error, so a deadline set by the caller (see package
// store/deadline) bounds the whole request, retries included. The error
// returned names how many attempts were made when there was more than one.
func Do(ctx context.Context, p Policy, op func(ctx context.Context) error) error {
	p = p.withDefaults()
	var err error
	for attempt := 1; ; attempt++ {
		if cerr := ctx.Err(); cerr != nil {
			if err == nil {
				return cerr
			}
			return fmt.Errorf("%w (gave up after %d attempts: %v)", err, attempt-1, cerr)
		}
		err = op(ctx)
		if err == nil || !IsTransient(err) || ctx.Err() != nil {
			if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
				// The attempt failed because the context ended: say so.
				return fmt.Errorf("%w: %w", ctx.Err(), err)
			}
			return err
		}
		if attempt >= p.Attempts {
			return fmt.Errorf("%w (gave up after %d attempts)", err, attempt)
		}
		wait := p.BaseDelay << (attempt - 1)
		if wait > p.MaxDelay || wait <= 0 {
			wait = p.MaxDelay
		}
		wait -= time.Duration(rand.Int64N(int64(wait)/2 + 1))
		var te *TransientError
		if errors.As(err, &te) && te.After > wait {
			wait = min(te.After, p.MaxDelay)
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fmt.Errorf("%w (gave up after %d attempts: the deadline is too close to wait %v for another)", err, attempt, wait)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
		case <-t.C:
		}
	}
}

// ParseRetryAfter reads a Retry-After header value in seconds (the HTTP
// date form is ignored); zero when absent or unreadable.
func ParseRetryAfter(v string) time.Duration {
	if n, err := strconv.Atoi(v); err == nil && n > 0 {
		return time.Duration(n) * time.Second
	}
	return 0
}

// ReaderAt reads one value of a store with range requests, as an
// io.ReaderAt of a known size. It keeps the last TailSize bytes of the value
// after the first read that needs them, so that reading the end of a zip
// archive and its central directory (many small reads near the end) costs
// one request. Other reads shorter than SmallRead are served from aligned
// blocks of BlockSize bytes, the last MaxBlocks of them kept, so that a
// reader asking for a few KiB at a time (a zip member's local header, a
// Deflate stream through a bufio.Reader) does not make a request for each.
// Longer reads go to the store as they are. It implements ReadAtContext
// (package zip uses it for member data); plain ReadAt uses the context
// given to NewReaderAt.
type ReaderAt struct {
	ctx  context.Context
	st   store.Store
	key  string
	size int64

	tailOff int64
	mu      sync.Mutex // held while the tail is read
	tail    []byte     // nil until read

	blockMu sync.Mutex
	blocks  map[int64]*list.Element // block index → element of lru holding a *block
	lru     *list.List              // most recently used first
	loads   singleflight.Group
}

type block struct {
	index int64
	data  []byte
}

// Sizes of a ReaderAt's caches.
const (
	TailSize  = 256 << 10
	SmallRead = 64 << 10
	BlockSize = 256 << 10
	MaxBlocks = 16
)

// NewReaderAt returns a reader of the value of key, which is size bytes
// long. Reads through ReadAt use ctx; keep it live while the reader is used.
func NewReaderAt(ctx context.Context, st store.Store, key string, size int64) *ReaderAt {
	return &ReaderAt{ctx: ctx, st: st, key: key, size: size, tailOff: max(size-TailSize, 0),
		blocks: map[int64]*list.Element{}, lru: list.New()}
}

// Size returns the value's size.
func (r *ReaderAt) Size() int64 { return r.size }

// ReadAt reads len(p) bytes at off under the context given to NewReaderAt.
func (r *ReaderAt) ReadAt(p []byte, off int64) (int, error) {
	return r.ReadAtContext(r.ctx, p, off)
}

// ReadAtContext reads len(p) bytes at off with io.ReaderAt semantics.
func (r *ReaderAt) ReadAtContext(ctx context.Context, p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: %q: negative offset %d", r.st, r.key, off)
	}
	if off >= r.size {
		return 0, io.EOF
	}
	want := min(int64(len(p)), r.size-off)
	if off >= r.tailOff {
		tail, err := r.readTail(ctx)
		if err != nil {
			return 0, err
		}
		n := copy(p[:want], tail[off-r.tailOff:])
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	if want < SmallRead {
		n := 0
		for int64(n) < want {
			o := off + int64(n)
			b, err := r.block(ctx, o/BlockSize)
			if err != nil {
				return n, err
			}
			k := copy(p[n:want], b[o%BlockSize:])
			if k == 0 {
				return n, fmt.Errorf("%s: %q: block %d is short: %w", r.st, r.key, o/BlockSize, io.ErrUnexpectedEOF)
			}
			n += k
		}
		if n < len(p) {
			return n, io.EOF
		}
		return n, nil
	}
	b, err := r.st.GetRange(ctx, r.key, store.Range(off, want))
	if err != nil {
		return 0, err
	}
	n := copy(p, b)
	if int64(n) < want {
		return n, fmt.Errorf("%s: %q: read %d bytes at %d, want %d: %w", r.st, r.key, n, off, want, io.ErrUnexpectedEOF)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// readTail returns the value's last bytes, reading them the first time (a
// failed read is tried again by the next caller).
func (r *ReaderAt) readTail(ctx context.Context) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.tail != nil {
		return r.tail, nil
	}
	b, err := r.st.GetRange(ctx, r.key, store.Range(r.tailOff, r.size-r.tailOff))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) != r.size-r.tailOff {
		return nil, fmt.Errorf("%s: %q: read %d bytes of the last %d: %w", r.st, r.key, len(b), r.size-r.tailOff, io.ErrUnexpectedEOF)
	}
	r.tail = b
	return b, nil
}

// block returns block i of the value (BlockSize bytes from i*BlockSize, or
// to the end), from the cache or read once for all concurrent callers.
func (r *ReaderAt) block(ctx context.Context, i int64) ([]byte, error) {
	r.blockMu.Lock()
	if e, ok := r.blocks[i]; ok {
		r.lru.MoveToFront(e)
		r.blockMu.Unlock()
		return e.Value.(*block).data, nil
	}
	r.blockMu.Unlock()
	v, err, _ := r.loads.Do(strconv.FormatInt(i, 10), func() (any, error) {
		start := i * BlockSize
		want := min(BlockSize, r.size-start)
		b, err := r.st.GetRange(ctx, r.key, store.Range(start, want))
		if err != nil {
			return nil, err
		}
		if int64(len(b)) != want {
			return nil, fmt.Errorf("%s: %q: read %d bytes at %d, want %d: %w", r.st, r.key, len(b), start, want, io.ErrUnexpectedEOF)
		}
		r.blockMu.Lock()
		defer r.blockMu.Unlock()
		if _, ok := r.blocks[i]; !ok {
			r.blocks[i] = r.lru.PushFront(&block{index: i, data: b})
			for r.lru.Len() > MaxBlocks {
				old := r.lru.Remove(r.lru.Back()).(*block)
				delete(r.blocks, old.index)
			}
		}
		return b, nil
	})
	if err != nil {
		return nil, err
	}
	return v.([]byte), nil
}

// NewTransport returns a transport for a remote store: the default
// transport's settings (proxy from the environment, dial and TLS
// timeouts), with up to conns idle connections kept per host and no
// transparent compression.
func NewTransport(conns int) *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns = max(conns*2, 100)
	t.MaxIdleConnsPerHost = max(conns, 2)
	t.DisableCompression = true
	t.IdleConnTimeout = time.Minute
	return t
}

// CloseOwn closes the idle connections of t, the transport a store made
// with NewTransport, or does nothing when t is nil (the store's caller gave
// it a client or transport of its own). Stores call it from Close.
func CloseOwn(t *http.Transport) error {
	if t != nil {
		t.CloseIdleConnections()
	}
	return nil
}
