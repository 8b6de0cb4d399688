// Package http is the zarrfs store for a Zarr hierarchy served over HTTP or
// HTTPS: key K of the store at https://host/data.zarr is the resource
// https://host/data.zarr/K.
//
// Reads are GET requests, ranged ones with a Range header (bytes=A-B,
// bytes=A- and the suffix form bytes=-N that shard indexes use). A server
// that ignores Range and answers 200 with the whole value is handled too
// (the part asked for is cut out, at the cost of the transfer). 404 and 410
// are store.ErrNotExist.
//
// A web server cannot list, so the store implements neither store.Lister
// nor store.Writer: a hierarchy is found from consolidated metadata or from
// the node paths a user names. It implements store.Stater (a HEAD request,
// or nothing at all for a key read before: what earlier answers said of
// its size and Last-Modified is kept).
//
// Transient failures (connection refused or reset, a body cut short, 408,
// 425, 429, 500, 502, 503, 504) are retried with backoff, honouring
// Retry-After, a bounded number of times and never past the context's
// deadline (package remote). Responses are not compressed in transit
// (Accept-Encoding is not sent), so ranges are ranges of the stored bytes.
package http

import (
	"context"
	"errors"
	"fmt"
	"io"
	nethttp "net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/remote"
)

// Options configures New.
type Options struct {
	// Client sends the requests; nil uses a client of the store's own whose
	// transport keeps Concurrency connections per host open.
	Client *nethttp.Client
	// Retry says how transient failures are retried.
	Retry remote.Policy
	// Concurrency is the most requests in flight; within it a
	// remote.Controller adapts the number to the store (0:
	// remote.DefaultCeiling).
	Concurrency int
	// Logf logs what the store should say once (throttling); nil: nothing.
	Logf func(format string, args ...any)
}

// Store is a read-only HTTP(S) store. It implements store.Store,
// store.Stater and io.Closer and is safe for concurrent use.
type Store struct {
	remote.Reads // Get, GetRange, GetRangeInfo, GetIfChanged: from read

	base   *url.URL // path ends with "/"
	name   string
	client *nethttp.Client
	own    *nethttp.Transport // closed by Close when the store made it
	retry  remote.Policy
	ctl    *remote.Controller
	infos  remote.Infos // what earlier answers said of keys
}

var (
	_ store.Store  = (*Store)(nil)
	_ store.Stater = (*Store)(nil)
	_ io.Closer    = (*Store)(nil)
)

// New returns the store rooted at rawURL (http:// or https://). A query
// string in rawURL (a signed URL's, say) is sent with every request but
// left out of String.
func New(rawURL string, opts Options) (*Store, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("http store: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("http store %s: scheme %q is not http or https", rawURL, u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("http store %s: no host", rawURL)
	}
	u.Fragment = ""
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = remote.DefaultCeiling
	}
	s := &Store{base: u, client: opts.Client, retry: opts.Retry}
	shown := *u
	shown.RawQuery, shown.User = "", nil
	s.name = "http " + strings.TrimSuffix(shown.String(), "/")
	s.ctl = remote.NewController(remote.ControllerOptions{Ceiling: opts.Concurrency, Name: s.name, Logf: opts.Logf})
	if s.client == nil {
		s.own = remote.NewTransport(opts.Concurrency)
		s.client = &nethttp.Client{Transport: s.own}
	}
	s.Reads = remote.NewReads(s, s.read)
	return s, nil
}

func (s *Store) String() string { return s.name }

// Close closes idle connections of the store's own transport.
func (s *Store) Close() error { return remote.CloseOwn(s.own) }

// URL returns the URL of key.
func (s *Store) URL(key string) string {
	segs := strings.Split(key, "/")
	for i, seg := range segs {
		segs[i] = url.PathEscape(seg)
	}
	u := *s.base
	u.RawQuery = ""
	v := u.String() + strings.Join(segs, "/")
	if s.base.RawQuery != "" {
		v += "?" + s.base.RawQuery
	}
	return v
}

var _ store.InfoGetter = (*Store)(nil)

// read reads the range r of key (remote.ReadFunc), with retries.
func (s *Store) read(ctx context.Context, key string, r store.ByteRange, old *store.Info) (out []byte, info store.Info, err error) {
	err = remote.Do(ctx, s.retry, func(ctx context.Context) error {
		var err error
		out, info, err = s.get(ctx, key, r, old)
		return err
	})
	return out, info, err
}

// get makes one attempt at reading a range of key.
func (s *Store) get(ctx context.Context, key string, r store.ByteRange, old *store.Info) (out []byte, _ store.Info, err error) {
	tk, err := s.ctl.Acquire(ctx)
	if err != nil {
		return nil, store.Info{}, err
	}
	defer func() { tk.Done(int64(len(out)), err) }()
	gen := s.infos.Generation()
	req, err := nethttp.NewRequestWithContext(ctx, nethttp.MethodGet, s.URL(key), nil)
	if err != nil {
		return nil, store.Info{}, fmt.Errorf("%s: get %s: %w", s, key, err)
	}
	ranged := r != store.All
	if ranged {
		req.Header.Set("Range", r.String())
	}
	op := "get " + key
	if ranged {
		op += " " + r.String()
	}
	switch {
	case old == nil:
	case old.ETag != "":
		req.Header.Set("If-None-Match", old.ETag)
	default:
		req.Header.Set("If-Modified-Since", old.ModTime.UTC().Format(nethttp.TimeFormat))
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, store.Info{}, fmt.Errorf("%s: %s: %w", s, op, err)
	}
	tk.FirstByte()
	defer resp.Body.Close()
	switch resp.StatusCode {
	case nethttp.StatusOK:
		size := resp.ContentLength
		body, err := remote.ReadBody(resp.Body, size)
		if err != nil {
			return nil, store.Info{}, fmt.Errorf("%s: %s: %w", s, op, err)
		}
		in := s.remember(key, gen, int64(len(body)), resp.Header)
		start, end, _ := r.Resolve(int64(len(body)))
		return body[start:end:end], in, nil
	case nethttp.StatusPartialContent:
		first, last, total, err := parseContentRange(resp.Header.Get("Content-Range"))
		if err != nil {
			return nil, store.Info{}, fmt.Errorf("%s: %s: %w", s, op, err)
		}
		if total >= 0 {
			if want, _, _ := r.Resolve(total); first != want && total > 0 {
				return nil, store.Info{}, fmt.Errorf("%s: %s: the server sent bytes %d-%d/%d", s, op, first, last, total)
			}
		} else if !r.Suffix && first != r.Offset {
			return nil, store.Info{}, fmt.Errorf("%s: %s: the server sent bytes %d-%d", s, op, first, last)
		}
		body, err := remote.ReadBody(resp.Body, last-first+1)
		if err != nil {
			return nil, store.Info{}, fmt.Errorf("%s: %s: %w", s, op, err)
		}
		in := store.Info{Size: -1}
		if total >= 0 {
			in = s.remember(key, gen, total, resp.Header)
		}
		if !r.Suffix && r.Length >= 0 && int64(len(body)) > r.Length {
			body = body[:r.Length:r.Length]
		}
		return body, in, nil
	case nethttp.StatusRequestedRangeNotSatisfiable:
		// A range starting at or past the end (or any range of an empty value).
		in := store.Info{Size: -1}
		if _, _, total, err := parseContentRange(resp.Header.Get("Content-Range")); err == nil && total >= 0 {
			in = s.remember(key, gen, total, resp.Header)
		}
		return []byte{}, in, nil
	case nethttp.StatusNotModified:
		if old != nil {
			return nil, *old, fmt.Errorf("%s: %s: %w", s, op, store.ErrNotModified)
		}
		return nil, store.Info{}, s.statusError(op, resp)
	default:
		return nil, store.Info{}, s.statusError(op, resp)
	}
}

// statusError turns an answer that is not a success into an error:
// ErrNotExist for 404 and 410, a transient error for the statuses worth
// retrying.
func (s *Store) statusError(op string, resp *nethttp.Response) error {
	// A little of the body helps to understand an error page.
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
	msg := strings.Join(strings.Fields(string(snippet)), " ")
	if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/plain") || msg == "" {
		msg = ""
	} else {
		msg = ": " + msg
	}
	err := fmt.Errorf("%s: %s: HTTP %s%s", s, op, resp.Status, msg)
	switch resp.StatusCode {
	case nethttp.StatusNotFound, nethttp.StatusGone:
		return fmt.Errorf("%s: %s: %w", s, op, store.ErrNotExist)
	case nethttp.StatusRequestTimeout, nethttp.StatusTooEarly, nethttp.StatusTooManyRequests,
		nethttp.StatusInternalServerError, nethttp.StatusBadGateway,
		nethttp.StatusServiceUnavailable, nethttp.StatusGatewayTimeout:
		return &remote.TransientError{Err: err, After: remote.ParseRetryAfter(resp.Header.Get("Retry-After")),
			Throttled: resp.StatusCode == nethttp.StatusTooManyRequests || resp.StatusCode == nethttp.StatusServiceUnavailable}
	}
	return err
}

// parseContentRange reads "bytes FIRST-LAST/TOTAL" (TOTAL may be "*": -1)
// or "bytes */TOTAL" (first and last -1).
func parseContentRange(v string) (first, last, total int64, err error) {
	bad := fmt.Errorf("malformed Content-Range %q", v)
	rest, ok := strings.CutPrefix(v, "bytes ")
	if !ok {
		return 0, 0, 0, bad
	}
	rng, tot, ok := strings.Cut(rest, "/")
	if !ok {
		return 0, 0, 0, bad
	}
	total = -1
	if tot != "*" {
		if total, err = strconv.ParseInt(tot, 10, 64); err != nil || total < 0 {
			return 0, 0, 0, bad
		}
	}
	if rng == "*" {
		return -1, -1, total, nil
	}
	if total == 0 {
		// An empty value: some servers (Go's http.ServeContent) send
		// "bytes 0--1/0" for a suffix range of it.
		return 0, -1, 0, nil
	}
	a, b, ok := strings.Cut(rng, "-")
	if !ok {
		return 0, 0, 0, bad
	}
	first, err1 := strconv.ParseInt(a, 10, 64)
	last, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || first < 0 || last < first || (total >= 0 && last >= total) {
		return 0, 0, 0, bad
	}
	return first, last, total, nil
}

// remember keeps what a response said of key, and returns it.
func (s *Store) remember(key string, gen uint64, size int64, h nethttp.Header) store.Info {
	in := info(size, h)
	s.infos.Remember(key, gen, in)
	return in
}

// info is the Info of a value of size bytes that an answer with headers h
// describes.
func info(size int64, h nethttp.Header) store.Info {
	i := store.Info{Size: size, ETag: h.Get("ETag")}
	if t, err := nethttp.ParseTime(h.Get("Last-Modified")); err == nil {
		i.ModTime = t
	}
	return i
}

// Stat returns the size and modification time of key: from an earlier
// answer when there was one, else from a HEAD request.
func (s *Store) Stat(ctx context.Context, key string) (store.Info, error) {
	return s.infos.Stat(ctx, key, func(ctx context.Context) (info store.Info, err error) {
		err = remote.Do(ctx, s.retry, func(ctx context.Context) error {
			info, err = s.head(ctx, key)
			return err
		})
		return info, err
	})
}

func (s *Store) head(ctx context.Context, key string) (_ store.Info, err error) {
	tk, err := s.ctl.Acquire(ctx)
	if err != nil {
		return store.Info{}, err
	}
	defer func() { tk.Done(0, err) }()
	req, err := nethttp.NewRequestWithContext(ctx, nethttp.MethodHead, s.URL(key), nil)
	if err != nil {
		return store.Info{}, fmt.Errorf("%s: stat %s: %w", s, key, err)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return store.Info{}, fmt.Errorf("%s: stat %s: %w", s, key, err)
	}
	tk.FirstByte()
	defer resp.Body.Close()
	if resp.StatusCode != nethttp.StatusOK {
		return store.Info{}, s.statusError("stat "+key, resp)
	}
	if resp.ContentLength < 0 {
		// No length in a HEAD answer: ask for one byte and read the total.
		resp.Body.Close()
		return s.statByRange(ctx, key)
	}
	return info(resp.ContentLength, resp.Header), nil
}

// statByRange learns the size of key from a one-byte ranged GET.
func (s *Store) statByRange(ctx context.Context, key string) (store.Info, error) {
	req, err := nethttp.NewRequestWithContext(ctx, nethttp.MethodGet, s.URL(key), nil)
	if err != nil {
		return store.Info{}, fmt.Errorf("%s: stat %s: %w", s, key, err)
	}
	req.Header.Set("Range", "bytes=0-0")
	resp, err := s.client.Do(req)
	if err != nil {
		return store.Info{}, fmt.Errorf("%s: stat %s: %w", s, key, err)
	}
	defer resp.Body.Close()
	switch resp.StatusCode {
	case nethttp.StatusOK:
		n, err := io.Copy(io.Discard, resp.Body)
		if err != nil {
			return store.Info{}, fmt.Errorf("%s: stat %s: %w", s, key, err)
		}
		return info(n, resp.Header), nil
	case nethttp.StatusPartialContent, nethttp.StatusRequestedRangeNotSatisfiable:
		_, _, total, err := parseContentRange(resp.Header.Get("Content-Range"))
		if err == nil && total < 0 {
			err = errors.New("no total length in Content-Range")
		}
		if err != nil {
			return store.Info{}, fmt.Errorf("%s: stat %s: %w", s, key, err)
		}
		return info(total, resp.Header), nil
	default:
		return store.Info{}, s.statusError("stat "+key, resp)
	}
}
