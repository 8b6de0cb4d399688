package main

import (
	"runtime"

	"github.com/zarrfs/zarrfs/internal/peertest"

	"context"
	"math"
	"os"
	"path/filepath"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"syscall"
	"testing"
	"time"
)

// startDemo runs `zarrfs demo MOUNTPOINT` in-process and waits until the
// mount is up and the demo has printed its help. Only stat and open (no reads) are done on the mount from
// this process.
func startDemo(t *testing.T) (mnt string, sigs chan os.Signal, done chan int, out *peertest.Buffer) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse: FUSE is unavailable here")
	}
	t.Setenv("TMPDIR", t.TempDir())
	mnt = filepath.Join(t.TempDir(), "mnt") // demo creates it
	sigs = make(chan os.Signal, 2)
	done = make(chan int, 1)
	out = &peertest.Buffer{}
	go func() {
		done <- run(context.Background(), &env{stdout: out, stderr: out, signals: sigs}, []string{"demo", mnt})
	}()
	deadline := time.Now().Add(20 * time.Second)
	for {
		_, err := os.Stat(filepath.Join(mnt, "temperature", "data.npy"))
		if err == nil && strings.Contains(out.String(), "Ctrl-C") {
			return mnt, sigs, done, out
		}
		select {
		case code := <-done:
			t.Fatalf("demo exited with status %d before mounting:\n%s", code, out)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("demo did not mount within 20 s:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitExit waits for the command to exit and checks its status.
func waitExit(t *testing.T, done chan int, within time.Duration, out *peertest.Buffer) {
	t.Helper()
	select {
	case code := <-done:
		if code != 0 {
			t.Errorf("exit status %d, want 0:\n%s", code, out)
		}
	case <-time.After(within):
		t.Fatalf("did not exit within %v:\n%s", within, out)
	}
}

func TestDemoSignalUnmounts(t *testing.T) {
	mnt, sigs, done, out := startDemo(t)
	for _, want := range []string{"ls -R", "od -A d -t f4 -N 64", "np.load(", "getfattr -d", "zarr.json"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("demo does not suggest %q:\n%s", want, out)
		}
	}
	start := time.Now()
	sigs <- syscall.SIGINT
	waitExit(t, done, 5*time.Second, out)
	t.Logf("unmounted and exited in %v", time.Since(start))
	if _, err := os.Stat(mnt); !os.IsNotExist(err) {
		t.Errorf("the mountpoint demo created is still there after exit: %v", err)
	}
	if left, _ := filepath.Glob(filepath.Join(os.Getenv("TMPDIR"), "zarrfs-demo-store-*")); len(left) != 0 {
		t.Errorf("demo left its temporary store behind: %v", left)
	}
}

func TestSignalWithOpenFileDetaches(t *testing.T) {
	mnt, sigs, done, out := startDemo(t)
	f, err := os.Open(filepath.Join(mnt, "temperature", "data"))
	if err != nil {
		t.Fatal(err)
	}
	sigs <- syscall.SIGTERM
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "detached") {
		if time.Now().After(deadline) {
			f.Close()
			t.Fatalf("no lazy detach within 5 s:\n%s", out)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(mnt, "temperature")); err == nil {
		t.Error("the mount is still visible after the detach")
	}
	select {
	case code := <-done:
		t.Fatalf("exited (status %d) while a file was still open", code)
	default:
	}
	f.Close()
	waitExit(t, done, 5*time.Second, out)
}

func TestUnmountCommandEndsMount(t *testing.T) {
	mnt, _, done, out := startDemo(t)
	if code, _, errOut := runCLI(t, "unmount", mnt); code != 0 {
		t.Fatalf("zarrfs unmount: status %d: %s", code, errOut)
	}
	waitExit(t, done, 5*time.Second, out)
	code, _, errOut := runCLI(t, "unmount", t.TempDir())
	if code != 1 || !strings.Contains(errOut, "not a mount point") && !strings.Contains(errOut, "not found") {
		t.Errorf("unmount of a plain directory: status %d, stderr %q", code, errOut)
	}
}

// TestSetMemoryLimit checks the memory limit a mount sets from its cache
// size: none without a cache, and none of its own when GOMEMLIMIT is set
// (the runtime has read that already).
func TestSetMemoryLimit(t *testing.T) {
	limit0 := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(limit0) })
	tune0 := tuneGC
	tuneGC = func(int64, int64, int64) func() { return func() {} } // TestGCTuner tests it
	t.Cleanup(func() { tuneGC = tune0 })
	const unlimited = math.MaxInt64
	for _, tc := range []struct {
		name, gomemlimit string
		cache            int64
		limit            int64
	}{
		{"default cache", "", 1 << 30, 1<<30 + memoryHeadroom},
		{"small cache", "", 16 << 20, 16<<20 + memoryHeadroom},
		{"no cache", "", 0, unlimited},
		{"GOMEMLIMIT set", "2GiB", 1 << 30, unlimited},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GOMEMLIMIT", tc.gomemlimit)
			debug.SetMemoryLimit(unlimited)
			m := &mountFlags{cacheSize: sizeValue(tc.cache)}
			m.setMemoryLimit()
			if got := debug.SetMemoryLimit(-1); got != tc.limit {
				t.Errorf("memory limit %d, want %d", got, tc.limit)
			}
		})
	}
}

// TestGCTuner: after a collection the memory limit is the maximum while
// the heap kept is under the room asked for, then what the heap kept plus
// the room, at most the maximum, and stays once the tuner is stopped.
func TestGCTuner(t *testing.T) {
	limit0 := debug.SetMemoryLimit(-1)
	t.Cleanup(func() { debug.SetMemoryLimit(limit0) })
	const unlimited, room = math.MaxInt64, 1 << 40
	debug.SetMemoryLimit(unlimited)
	stop := startGCTuner(room, 0, unlimited-1)
	deadline := time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) == unlimited && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond) // the cleanup runs in its own goroutine
	}
	stop()
	if got := debug.SetMemoryLimit(-1); got != unlimited-1 {
		t.Fatalf("memory limit %d after a collection of a heap under room, want the maximum", got)
	}
	stop = startGCTuner(1, 0, unlimited)
	debug.SetMemoryLimit(unlimited)
	deadline = time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) == unlimited && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	stop()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if got := debug.SetMemoryLimit(-1); got < 1 || got > 1+int64(ms.HeapSys) {
		t.Fatalf("memory limit %d after a collection, want 1 byte of room plus the live heap (at most %d)", got, ms.HeapSys)
	}
	debug.SetMemoryLimit(unlimited)
	runtime.GC()
	runtime.GC()
	time.Sleep(10 * time.Millisecond)
	if got := debug.SetMemoryLimit(-1); got != unlimited {
		t.Errorf("memory limit %d after the tuner stopped", got)
	}

	// With a share, the room is at least the live heap / share: here
	// the whole live heap, where the room asked for is 1 byte.
	stop = startGCTuner(1, 1, unlimited)
	deadline = time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) == unlimited && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	stop()
	live := []metrics.Sample{{Name: liveMetric}}
	metrics.Read(live)
	if got, l := debug.SetMemoryLimit(-1), int64(live[0].Value.Uint64()); got < l*3/2 || got > 3*l {
		t.Errorf("memory limit %d with a share of 1, want about twice the live heap %d", got, l)
	}
	debug.SetMemoryLimit(unlimited)

	// Never over the maximum: the mount's limit (cache + headroom).
	const max = 1 << 20
	stop = startGCTuner(room, 0, max)
	defer stop()
	deadline = time.Now().Add(5 * time.Second)
	for debug.SetMemoryLimit(-1) == unlimited && time.Now().Before(deadline) {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	if got := debug.SetMemoryLimit(-1); got != max {
		t.Errorf("memory limit %d, want the maximum %d", got, max)
	}
}
