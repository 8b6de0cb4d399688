// Command farstore makes a local store look far away, for `make
// bench-remote` (bench/remote.py, BENCH.md): an HTTP server that waits a
// first-byte delay before answering each request and sends every answer's
// body at a bandwidth per connection, either serving a directory itself
// (GET and HEAD with Range) or forwarding to another server (an S3 server
// such as versitygw; the Host header is kept, so signed requests stay
// valid). It is the remote tests' server and proxy
// (store/remote/remotetest) with a delay, a bandwidth and throttling set
// from flags.
//
//	farstore -listen 127.0.0.1:0 -delay 50ms -bw 80e6 -dir DIR
//	farstore -listen 127.0.0.1:0 -delay 50ms -bw 80e6 -target http://127.0.0.1:7070
//
// -throttle F answers a fraction F of requests 503 (after the delay), as a
// throttling S3 does. It prints its URL on the first line of standard
// output, then serves until killed; on SIGUSR1 it prints (to standard
// error) the requests it answered since the last time, by kind, and the
// most it was answering at once (delays included).
package main

import (
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"syscall"

	"github.com/zarrfs/zarrfs/store/remote/remotetest"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:0", "address to listen on")
	delay := flag.Duration("delay", 0, "wait before answering each request (first-byte latency)")
	bw := flag.Float64("bw", 0, "bytes per second of each answer's body (0: unlimited)")
	dir := flag.String("dir", "", "serve this directory")
	target := flag.String("target", "", "forward to this http:// server")
	throttle := flag.Float64("throttle", 0, "fraction of requests answered 503")
	flag.Parse()
	if (*dir == "") == (*target == "") {
		log.Fatal("farstore: give one of -dir and -target")
	}
	fault := func(*http.Request, int64) remotetest.Action {
		act := remotetest.Action{Delay: *delay}
		if *throttle > 0 && rand.Float64() < *throttle {
			act.Status = http.StatusServiceUnavailable
		}
		return act
	}
	var counts interface{ Counts() map[string]int }
	var h http.Handler
	if *dir != "" {
		s := &remotetest.Server{Dir: *dir, Fault: fault, Bandwidth: *bw}
		h, counts = s, s
	} else {
		p := &remotetest.Proxy{Target: *target, Fault: fault, Bandwidth: *bw}
		h, counts = p, p
	}
	f := &far{next: h, counts: counts}
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

// far notes how many requests next is answering at once.
type far struct {
	next   http.Handler
	counts interface{ Counts() map[string]int }

	mu       sync.Mutex
	inflight int // requests being answered
	peak     int // the most at once since the last report
}

func (f *far) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.inflight++
	f.peak = max(f.peak, f.inflight)
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		f.inflight--
		f.mu.Unlock()
	}()
	f.next.ServeHTTP(w, r)
}

// report returns the counts since the last report, and resets them.
func (f *far) report() string {
	var parts []string
	for k, n := range f.counts.Counts() {
		parts = append(parts, fmt.Sprintf("%s=%d", strings.ReplaceAll(k, " ", "_"), n))
	}
	sort.Strings(parts)
	f.mu.Lock()
	peak := f.peak
	f.peak = f.inflight
	f.mu.Unlock()
	return fmt.Sprintf("requests %s; at most %d at once", strings.Join(parts, " "), peak)
}
