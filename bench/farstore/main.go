// Command farstore makes a local store look far away, for `make
// bench-remote` (bench/remote.py, BENCH.md): an HTTP server that waits a
// first-byte delay before answering each request and sends every answer's
// body at a bandwidth per connection, either serving a directory itself
// (GET and HEAD with Range, as a static web server does) or forwarding to
// another server (an S3 server such as versitygw; the Host header is kept,
// so signed requests stay valid).
//
//	farstore -listen 127.0.0.1:0 -delay 50ms -bw 80e6 -dir DIR
//	farstore -listen 127.0.0.1:0 -delay 50ms -bw 80e6 -target http://127.0.0.1:7070
//
// -throttle F answers a fraction F of requests 503 SlowDown (after the
// delay), as a throttling S3 does. It prints its URL on the first line of
// standard output, then serves until killed; on SIGUSR1 it prints (to
// standard error) the requests it answered since the last time, by kind,
// and the most it answered at once (after the delay).
package main

import (
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	delay := flag.Duration("delay", 0, "wait before answering each request (first-byte latency)")
	bw := flag.Float64("bw", 0, "bytes per second of each answer's body (0: unlimited)")
	dir := flag.String("dir", "", "serve this directory")
	target := flag.String("target", "", "forward to this http:// server")
	throttle := flag.Float64("throttle", 0, "fraction of requests answered 503 SlowDown")
	flag.Parse()
	if (*dir == "") == (*target == "") {
		log.Fatal("farstore: give one of -dir and -target")
	}
	var h http.Handler
	if *dir != "" {
		h = http.FileServer(http.Dir(*dir))
	} else {
		u, err := url.Parse(*target)
		if err != nil {
			log.Fatal(err)
		}
		rp := httputil.NewSingleHostReverseProxy(u)
		t := http.DefaultTransport.(*http.Transport).Clone()
		t.MaxIdleConnsPerHost = 1024
		t.DisableCompression = true
		rp.Transport = t
		rp.FlushInterval = -1
		h = rp
	}
	f := &far{next: h, delay: *delay, bw: *bw, throttle: *throttle, counts: map[string]int{}}
	l, err := net.Listen("tcp", *listen)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("http://%s\n", l.Addr())
	os.Stdout.Sync()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGUSR1)
	go func() {
		for range sig {
			fmt.Fprintln(os.Stderr, f.report())
		}
	}()
	log.Fatal(http.Serve(l, f))
}

// far delays, throttles and paces the answers of next.
type far struct {
	next     http.Handler
	delay    time.Duration
	bw       float64
	throttle float64

	mu       sync.Mutex
	counts   map[string]int
	inflight int // requests being answered
	peak     int // the most at once since the last report
}

func (f *far) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	kind := r.Method
	if r.Header.Get("Range") != "" {
		kind += " range"
	} else if r.URL.Query().Has("list-type") {
		kind += " list"
	}
	if f.delay > 0 {
		select {
		case <-time.After(f.delay):
		case <-r.Context().Done():
			return
		}
	}
	if f.throttle > 0 && rand.Float64() < f.throttle {
		f.count(kind + " (503)")
		w.Header().Set("Content-Type", "application/xml")
		w.WriteHeader(http.StatusServiceUnavailable)
		io.WriteString(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`)
		return
	}
	f.count(kind)
	f.mu.Lock()
	f.inflight++
	f.peak = max(f.peak, f.inflight)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inflight--
		f.mu.Unlock()
	}()
	if f.bw > 0 {
		w = &paced{ResponseWriter: w, bw: f.bw, start: time.Now()}
	}
	f.next.ServeHTTP(w, r)
}

func (f *far) count(kind string) {
	f.mu.Lock()
	f.counts[kind]++
	f.mu.Unlock()
}

// report returns the counts since the last report, and resets them.
func (f *far) report() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var parts []string
	for k, n := range f.counts {
		parts = append(parts, fmt.Sprintf("%s=%d", strings.ReplaceAll(k, " ", "_"), n))
	}
	sort.Strings(parts)
	f.counts = map[string]int{}
	peak := f.peak
	f.peak = f.inflight
	return fmt.Sprintf("requests %s; at most %d at once", strings.Join(parts, " "), peak)
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
// otherwise send the file with sendfile, unpaced).
func (p *paced) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{p}, r)
}

func (p *paced) Flush() {
	if f, ok := p.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}
