// Package remotetest serves key–value data over HTTP, and forwards requests
// to another server, for tests of the remote stores: Range requests (with
// the suffix form), request counting, injected faults (status codes,
// hanging, slow answers, bodies cut short, added latency) and a bandwidth
// per answer. bench/farstore is built on it, to make a local store look far
// away for `make bench-remote`.
package remotetest

import (
	"bytes"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Fault decides what the server does with one request: return a zero
// Action to serve it normally.
type Fault func(r *http.Request, n int64) Action

// Action is an injected fault.
type Action struct {
	Status     int           // answer with this status (and RetryAfter) instead
	RetryAfter string        // Retry-After header sent with Status
	Hang       bool          // never answer (until the client goes away or the server closes)
	Delay      time.Duration // wait this long before answering
	CutAfter   int           // send only this many body bytes, then drop the connection (0: no cut)
}

// Server serves Data (keys to values) under its root URL, or the files
// of a directory when Dir is set. Requests counts the requests by
// method ("GET", "GET range", "HEAD"); Fault, when set, can change the
// answer to any request.
type Server struct {
	mu   sync.RWMutex
	Data map[string][]byte
	Dir  string
	// IgnoreRange answers every GET with the whole value (200).
	IgnoreRange bool
	Fault       Fault
	ModTime     time.Time
	// Bandwidth is the bytes per second of each answer's body (0: unlimited).
	Bandwidth float64

	tagMu sync.Mutex
	tags  map[string]fileTag // Dir's files' entity tags

	requests
}

// fileTag is the entity tag of one version of a file of Dir.
type fileTag struct {
	size  int64
	mtime time.Time
	etag  string
}

// Set replaces the value of key.
func (s *Server) Set(key string, v []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.Data == nil {
		s.Data = map[string][]byte{}
	}
	s.Data[key] = v
}

// SetFault replaces the fault function (safe while serving).
func (s *Server) SetFault(f Fault) {
	s.countMu.Lock()
	s.Fault = f
	s.countMu.Unlock()
}

// requests counts the requests a Server or a Proxy receives and holds the
// channel its hanging requests wait on.
type requests struct {
	n       atomic.Int64
	countMu sync.Mutex
	counts  map[string]int
	paths   []string
	hang    chan struct{}
	once    sync.Once
}

// count notes the request r under its kind and path, and returns its
// number (from 1).
func (q *requests) count(r *http.Request) int64 {
	kind := r.Method
	if r.Header.Get("Range") != "" {
		kind += " range"
	}
	if r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" {
		kind += " if changed"
	}
	q.countMu.Lock()
	if q.counts == nil {
		q.counts = map[string]int{}
	}
	q.counts[kind]++
	q.paths = append(q.paths, strings.TrimSpace(r.Method+" "+r.URL.Path+" "+r.Header.Get("Range")))
	q.countMu.Unlock()
	return q.n.Add(1)
}

// take counts the request r and carries out the fault *fault (read under
// countMu) decides for it after delay: it returns the fault's action and
// whether r is done with (see Action.answer).
func (q *requests) take(w http.ResponseWriter, r *http.Request, fault *Fault, delay time.Duration) (Action, bool) {
	n := q.count(r)
	q.countMu.Lock()
	f := *fault
	q.countMu.Unlock()
	var act Action
	if f != nil {
		act = f(r, n)
	}
	return act, act.answer(w, r, delay+act.Delay, q.hangCh)
}

// Counts returns the requests received so far by kind ("GET", "GET
// range", "HEAD", "PUT", …) and resets them (and Paths).
func (q *requests) Counts() map[string]int {
	q.countMu.Lock()
	defer q.countMu.Unlock()
	c := q.counts
	q.counts = nil
	q.paths = nil
	return c
}

// Paths returns "METHOD path [range]" of the requests since the last
// Counts.
func (q *requests) Paths() []string {
	q.countMu.Lock()
	defer q.countMu.Unlock()
	return append([]string(nil), q.paths...)
}

// Release ends every hanging request.
func (q *requests) Release() {
	ch := q.hangCh()
	q.once.Do(func() { close(ch) })
}

func (q *requests) hangCh() chan struct{} {
	q.countMu.Lock()
	defer q.countMu.Unlock()
	if q.hang == nil {
		q.hang = make(chan struct{})
	}
	return q.hang
}

// answer carries out the fault act before the request r is served: it
// waits delay, then hangs until hang's channel closes or answers with
// act.Status. It reports whether r is done with (answered, hung up on or
// gone), so that the caller must not serve it.
func (act Action) answer(w http.ResponseWriter, r *http.Request, delay time.Duration, hang func() chan struct{}) bool {
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return true
		}
	}
	if act.Hang {
		select {
		case <-hang():
		case <-r.Context().Done():
		}
		return true
	}
	if act.Status != 0 {
		if act.RetryAfter != "" {
			w.Header().Set("Retry-After", act.RetryAfter)
		}
		http.Error(w, http.StatusText(act.Status), act.Status)
		return true
	}
	return false
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	act, done := s.take(w, r, &s.Fault, 0)
	if done {
		return
	}
	w = pace(w, s.Bandwidth)
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	key := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
	if s.Dir != "" && act.CutAfter == 0 && !s.IgnoreRange {
		// A range of a big file (a Kerchunk target) reads that range only.
		s.serveFile(w, r, key)
		return
	}
	v, ok := s.value(key)
	if !ok {
		http.NotFound(w, r)
		return
	}
	if act.CutAfter > 0 {
		w.Header().Set("Content-Length", strconv.Itoa(len(v)))
		w.WriteHeader(http.StatusOK)
		w.Write(v[:min(act.CutAfter, len(v))])
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				if tc, ok := c.(*net.TCPConn); ok {
					tc.SetLinger(0) // a reset, not a clean close
				}
				c.Close()
			}
		}
		return
	}
	if s.IgnoreRange {
		w.Header().Set("Content-Length", strconv.Itoa(len(v)))
		if r.Method == http.MethodGet {
			w.Write(v)
		}
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	// An entity tag from the value, for conditional requests
	// (http.ServeContent answers them).
	w.Header().Set("ETag", fmt.Sprintf(`"%08x-%d"`, crc32.ChecksumIEEE(v), len(v)))
	http.ServeContent(w, r, "", s.ModTime, bytes.NewReader(v))
}

// serveFile answers r with the file key of Dir.
func (s *Server) serveFile(w http.ResponseWriter, r *http.Request, key string) {
	f, etag, ok := s.file(key)
	if !ok {
		http.NotFound(w, r)
		return
	}
	defer f.Close()
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("ETag", etag)
	http.ServeContent(w, r, "", s.ModTime, f)
}

// file opens the file key of Dir, with its entity tag: the one Data's
// values get (from the CRC-32 of the bytes). A file over 1 MiB has it
// computed once for each version (its size and modification time); a
// smaller one, which a test may rewrite within one tick of the clock that
// stamps modification times, at every request.
func (s *Server) file(key string) (*os.File, string, bool) {
	if key == "" || key == "." {
		return nil, "", false
	}
	f, err := os.Open(filepath.Join(s.Dir, filepath.FromSlash(key)))
	if err != nil {
		return nil, "", false
	}
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		f.Close()
		return nil, "", false
	}
	s.tagMu.Lock()
	t, ok := s.tags[key]
	s.tagMu.Unlock()
	if !ok || fi.Size() <= 1<<20 || t.size != fi.Size() || !t.mtime.Equal(fi.ModTime()) {
		h := crc32.NewIEEE()
		n, err := io.Copy(h, io.NewSectionReader(f, 0, fi.Size()))
		if err != nil || n != fi.Size() {
			f.Close()
			return nil, "", false
		}
		t = fileTag{size: fi.Size(), mtime: fi.ModTime(), etag: fmt.Sprintf(`"%08x-%d"`, h.Sum32(), n)}
		s.tagMu.Lock()
		if s.tags == nil {
			s.tags = map[string]fileTag{}
		}
		s.tags[key] = t
		s.tagMu.Unlock()
	}
	return f, t.etag, true
}

// value returns the value of key from Data or Dir.
func (s *Server) value(key string) ([]byte, bool) {
	if s.Dir != "" {
		if key == "" || key == "." {
			return nil, false
		}
		b, err := os.ReadFile(filepath.Join(s.Dir, filepath.FromSlash(key)))
		return b, err == nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.Data[key]
	return v, ok
}

// Proxy forwards requests to Target (an http:// URL), counting them and
// applying Fault before forwarding: a delaying proxy adds latency, a
// failing one answers 503 for the server. The Host header is passed
// through unchanged, so signed (S3) requests stay valid.
type Proxy struct {
	Target string
	Fault  Fault
	// Latency is added to every request before it is forwarded.
	Latency time.Duration
	// Bandwidth is the bytes per second of each answer's body (0: unlimited).
	Bandwidth float64

	once sync.Once // sets rp
	rp   *httputil.ReverseProxy
	requests
}

// SetFault replaces the fault function (safe while serving).
func (p *Proxy) SetFault(f Fault) {
	p.countMu.Lock()
	p.Fault = f
	p.countMu.Unlock()
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.once.Do(func() {
		u, err := url.Parse(p.Target)
		if err != nil {
			panic(err)
		}
		p.rp = httputil.NewSingleHostReverseProxy(u)
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 256
		t.DisableCompression = true
		p.rp.Transport = t
		if p.Bandwidth > 0 {
			p.rp.FlushInterval = -1 // each paced write goes out at once
		}
	})
	if _, done := p.take(w, r, &p.Fault, p.Latency); done {
		return
	}
	p.rp.ServeHTTP(pace(w, p.Bandwidth), r)
}

// pace returns w writing no faster than bw bytes per second (w itself when
// bw is 0).
func pace(w http.ResponseWriter, bw float64) http.ResponseWriter {
	if bw <= 0 {
		return w
	}
	return &paced{ResponseWriter: w, bw: bw, start: time.Now()}
}

// paced writes a body no faster than bw bytes per second since start.
type paced struct {
	http.ResponseWriter
	bw    float64
	start time.Time
	sent  int64
}

// pacedWrite is the most written at once, so that the pace is smooth.
const pacedWrite = 64 << 10

func (p *paced) Write(b []byte) (int, error) {
	n := 0
	for len(b) > 0 {
		k := min(len(b), pacedWrite)
		due := p.start.Add(time.Duration(float64(p.sent+int64(k)) / p.bw * float64(time.Second)))
		if d := time.Until(due); d > 0 {
			time.Sleep(d)
		}
		m, err := p.ResponseWriter.Write(b[:k])
		n += m
		p.sent += int64(m)
		if err != nil {
			return n, err
		}
		b = b[k:]
	}
	return n, nil
}

// ReadFrom keeps io.Copy going through Write (http.ServeContent would
// otherwise send a file with sendfile, unpaced).
func (p *paced) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{p}, r)
}

func (p *paced) Flush() {
	if f, ok := p.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
