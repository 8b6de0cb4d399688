package integration

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	zfs "github.com/zarrfs/zarrfs/fs"
	"github.com/zarrfs/zarrfs/internal/peertest"
)

// holder is a python3 process holding a file of a mount open (see
// holderProgram): it prints "open", and reads 16 bytes when told.
type holder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
}

// holdOpen starts a holder on path and waits until it has the file open.
func holdOpen(t *testing.T, path string) *holder {
	t.Helper()
	peertest.NeedPython(t)
	h := &holder{cmd: exec.Command(peertest.Python, "-c", holderProgram, path)}
	var err error
	if h.stdin, err = h.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := h.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h.cmd.Stderr = io.Discard // its read after the daemon exits fails, by design
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		h.cmd.Process.Kill()
		h.cmd.Wait()
	})
	h.lines = bufio.NewScanner(stdout)
	if !h.lines.Scan() || h.lines.Text() != "open" {
		t.Fatalf("the holder did not open %s: %q", path, h.lines.Text())
	}
	return h
}

// waitDetached waits until mnt is no longer a mount point, at most limit.
func waitDetached(t *testing.T, mnt string, limit time.Duration) time.Duration {
	t.Helper()
	start := time.Now()
	for isMountpoint(mnt) {
		if time.Since(start) > limit {
			t.Fatalf("%s still mounted %v after the signal", mnt, limit)
		}
		time.Sleep(10 * time.Millisecond)
	}
	return time.Since(start)
}

// checkClean asserts that mnt is an ordinary, usable directory again: not
// a mount point, and not a dead FUSE mount (ENOTCONN).
func checkClean(t *testing.T, mnt string) {
	t.Helper()
	if isMountpoint(mnt) {
		t.Errorf("%s is still a mount point", mnt)
	}
	if err := zfs.CheckMountpoint(mnt); err != nil {
		t.Errorf("%s left behind: %v", mnt, err)
	}
}

// lifecycleStore writes the example hierarchy once per test and returns it
// with the path of an array of numbers in it.
func lifecycleStore(t *testing.T) (store, arr string) {
	t.Helper()
	store = filepath.Join(t.TempDir(), "example")
	mustZarrfs(t, "example", store)
	if _, err := os.Stat(filepath.Join(store, "temperature", "zarr.json")); err != nil {
		t.Fatalf("the example has no temperature array: %v", err)
	}
	return store, "temperature"
}

// TestLifecycleSecondSignal: SIGTERM with a file open detaches the mount;
// a second SIGTERM makes zarrfs exit at once, leaving no stale mount.
func TestLifecycleSecondSignal(t *testing.T) {
	needFuse(t)
	store, arr := lifecycleStore(t)
	m := mountChecked(t, store)
	holdOpen(t, filepath.Join(m.dir, arr, "data"))
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	d := waitDetached(t, m.dir, 5*time.Second)
	if d > slack(time.Second) {
		t.Errorf("detached %v after SIGTERM; want at once (< %v)", d, slack(time.Second))
	}
	time.Sleep(100 * time.Millisecond)
	select {
	case <-m.exited:
		t.Fatalf("zarrfs exited (%v) on the first signal with a file open", m.waitErr)
	default:
	}
	err, took := m.signalAndWait(t, syscall.SIGTERM, slack(time.Second))
	t.Logf("detached %v after the first SIGTERM; exited %v after the second (%v)", d.Round(time.Millisecond), took.Round(time.Millisecond), err)
	if err != nil {
		t.Errorf("zarrfs exited with %v after a second SIGTERM\n%s", err, m.stderr.String())
	}
	if !strings.Contains(m.stderr.String(), "again") {
		t.Errorf("no log line for the second signal:\n%s", m.stderr.String())
	}
	checkClean(t, m.dir)
}

// TestLifecycleGracePeriod: with a file held open past --detach-grace,
// zarrfs exits when the grace period ends, not before, and leaves no stale
// mount.
func TestLifecycleGracePeriod(t *testing.T) {
	needFuse(t)
	store, arr := lifecycleStore(t)
	const grace = 2 * time.Second
	m := mountChecked(t, store, "--detach-grace", grace.String())
	holdOpen(t, filepath.Join(m.dir, arr, "data"))
	start := time.Now()
	if err := m.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	waitDetached(t, m.dir, 5*time.Second)
	select {
	case <-m.exited:
	case <-time.After(grace + slack(2*time.Second)):
		t.Fatalf("zarrfs still running %v after SIGTERM with a %v grace period", time.Since(start), grace)
	}
	took := time.Since(start)
	t.Logf("exited %v after SIGTERM (grace %v)", took.Round(time.Millisecond), grace)
	if took < grace {
		t.Errorf("exited after %v, before the grace period (%v) ended", took, grace)
	}
	if took > grace+slack(time.Second) {
		t.Errorf("exited %v after SIGTERM; want within the grace period (%v) + %v", took, grace, slack(time.Second))
	}
	if m.waitErr != nil {
		t.Errorf("zarrfs exited with %v", m.waitErr)
	}
	if !strings.Contains(m.stderr.String(), "grace period over") {
		t.Errorf("no log line for the end of the grace period:\n%s", m.stderr.String())
	}
	checkClean(t, m.dir)
}

// TestLifecycleSIGINT: SIGINT with no file open unmounts and exits 0
// within 5 s, like SIGTERM (TestMountSIGTERM).
func TestLifecycleSIGINT(t *testing.T) {
	needFuse(t)
	store, _ := lifecycleStore(t)
	m := mountChecked(t, store)
	err, took := m.signalAndWait(t, syscall.SIGINT, 5*time.Second)
	t.Logf("exited %v after SIGINT", took.Round(time.Millisecond))
	if err != nil {
		t.Errorf("zarrfs exited with %v after SIGINT\n%s", err, m.stderr.String())
	}
	checkClean(t, m.dir)
}

// TestLifecycleSIGKILL: SIGKILL leaves the mount point dead (ENOTCONN);
// the next zarrfs mount there fails, saying how to clear it; the command
// it names clears it, and zarrfs mounts again.
func TestLifecycleSIGKILL(t *testing.T) {
	needFuse(t)
	store, arr := lifecycleStore(t)
	m := mountChecked(t, store)
	if err, _ := m.signalAndWait(t, syscall.SIGKILL, 5*time.Second); err == nil {
		t.Fatal("zarrfs exited 0 after SIGKILL?")
	}
	t.Cleanup(func() { unmount(m.dir) })
	// (Not a listing: the kernel may answer it from its cache.)
	var fsStat syscall.Statfs_t
	if err := syscall.Statfs(m.dir, &fsStat); !errors.Is(err, syscall.ENOTCONN) {
		t.Fatalf("after SIGKILL, statfs %s: %v; want ENOTCONN", m.dir, err)
	}
	var stale *zfs.StaleMountError
	if err := zfs.CheckMountpoint(m.dir); !errors.As(err, &stale) {
		t.Errorf("CheckMountpoint after SIGKILL: %v; want a *StaleMountError", err)
	}
	r := runZarrfs(t, "mount", store, m.dir)
	clear := "fusermount3 -u " + m.dir
	if r.err == nil || !isCleanExit1(r) {
		t.Fatalf("zarrfs mount on a stale mount point: %v; want exit status 1\n%s", r.err, r.stderr)
	}
	msg := string(r.stderr)
	if !strings.Contains(msg, clear) || !strings.Contains(msg, "not connected") {
		t.Errorf("zarrfs mount on a stale mount point said %q; want it to name %q", msg, clear)
	}
	t.Logf("zarrfs mount on the stale mount point: %s", strings.TrimSpace(msg))
	// The named command clears it.
	fields := strings.Fields(clear)
	if _, stderr, err := runTool(fields[0], fields[1:]...); err != nil {
		t.Fatalf("%s: %v %s", clear, err, stderr)
	}
	checkClean(t, m.dir)
	m2 := startMount(t, m.dir, "mount", store, m.dir)
	t.Cleanup(func() { checkNoRace(t, m2) })
	if _, err := os.Stat(filepath.Join(m2.dir, arr, "data")); err != nil {
		t.Errorf("the new mount: %v", err)
	}
	if err, _ := m2.signalAndWait(t, syscall.SIGTERM, 5*time.Second); err != nil {
		t.Errorf("the new mount exited with %v", err)
	}
	checkClean(t, m.dir)
}

// cyclesProgram opens, reads and closes the given files round-robin N
// times (argv: N FILE...), reading a little at a varying offset each time.
const cyclesProgram = `
import os, sys
n, files = int(sys.argv[1]), sys.argv[2:]
total = 0
for i in range(n):
    fd = os.open(files[i % len(files)], os.O_RDONLY)
    try:
        size = os.fstat(fd).st_size
        total += len(os.pread(fd, 4096, (i * 7919 * 4096) % max(size, 1)))
    finally:
        os.close(fd)
print(total)
`

// dataFiles lists the data (and data.npy) files of the mount's arrays.
func dataFiles(t *testing.T, store, mnt string) []string {
	t.Helper()
	var files []string
	for _, a := range findArrays(t, store) {
		for _, name := range []string{"data", "data.npy"} {
			p := filepath.Join(mnt, a.Path, name)
			if _, err := os.Stat(p); err == nil {
				files = append(files, p)
			}
		}
	}
	if len(files) == 0 {
		t.Fatal("no data files in the mount")
	}
	return files
}

// settle polls count until it is at most want, for at most limit, and
// returns the last value.
func settle(limit time.Duration, want int, count func() int) int {
	deadline := time.Now().Add(limit)
	n := count()
	for n > want && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		n = count()
	}
	return n
}

// TestLifecycleCyclesFDs: after 1,000 open/read/close cycles, the zarrfs
// daemon's open file descriptors are back at their baseline.
func TestLifecycleCyclesFDs(t *testing.T) {
	needFuse(t)
	store, _ := lifecycleStore(t)
	m := mountChecked(t, store)
	files := dataFiles(t, store, m.dir)
	pid := m.cmd.Process.Pid
	fds := func() int {
		n, err := openFDs(pid)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	// A first round loads every node and starts what the daemon keeps.
	peertest.RunPython(t, cyclesProgram, append([]string{fmt.Sprint(2 * len(files))}, files...)...)
	base := settle(2*time.Second, 0, fds)
	peertest.RunPython(t, cyclesProgram, append([]string{"1000"}, files...)...)
	during := fds()
	after := settle(5*time.Second, base, fds)
	t.Logf("daemon fds: %d at baseline, %d right after 1,000 open/read/close cycles over %d files, %d once settled", base, during, len(files), after)
	if after > base {
		t.Errorf("the daemon holds %d file descriptors after 1,000 cycles, %d before", after, base)
	}
}

// goroutines counts the goroutines of this process, apart from go-fuse's
// server goroutines (Serve and its pool of request readers blocked reading
// /dev/fuse: it keeps up to GOMAXPROCS + 1 readers, at least 3, however
// many requests came), which it counts separately.
func goroutines() (others, readers int, dump string) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "go-fuse/v2/fuse.(*Server).") { // Serve (which reads too) and loop
			readers++
		} else if strings.HasPrefix(g, "goroutine ") {
			others++
		}
	}
	return others, readers, string(buf)
}

// TestLifecycleCyclesGoroutines: after 1,000 open/read/close cycles on an
// in-process mount (readers in a subprocess), the goroutines of the
// serving process are back at their baseline, apart from go-fuse's
// bounded pool of idle request readers.
func TestLifecycleCyclesGoroutines(t *testing.T) {
	needFuse(t)
	store, _ := lifecycleStore(t)
	mnt, _, _ := inProcessMount(t, openDir(t, store), zfs.Config{})
	files := dataFiles(t, store, mnt)
	fds := func() int {
		n, err := openFDs(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	others := func() int { n, _, _ := goroutines(); return n }
	peertest.RunPython(t, cyclesProgram, append([]string{fmt.Sprint(2 * len(files))}, files...)...)
	time.Sleep(200 * time.Millisecond)
	baseG, baseR, _ := goroutines()
	baseF := fds()
	peertest.RunPython(t, cyclesProgram, append([]string{"1000"}, files...)...)
	duringG, duringR, _ := goroutines()
	afterG := settle(5*time.Second, baseG, others)
	afterF := settle(5*time.Second, baseF, fds)
	_, afterR, dump := goroutines()
	// go-fuse starts another reader while reqReaders <= maxReaders
	// (GOMAXPROCS within [2, 16]): up to maxReaders + 1 of them, and
	// Serve's goroutine, once its own loop has ended, waits for them.
	maxReaders := min(max(runtime.GOMAXPROCS(0), 2), 16) + 2
	t.Logf("serving process: goroutines %d at baseline, %d right after 1,000 cycles, %d once settled (plus go-fuse server goroutines: %d, %d, %d; at most %d); fds %d, then %d",
		baseG, duringG, afterG, baseR, duringR, afterR, maxReaders, baseF, afterF)
	if afterG > baseG {
		t.Errorf("%d goroutines after 1,000 cycles, %d before:\n%s", afterG, baseG, dump)
	}
	if afterR > maxReaders {
		t.Errorf("%d go-fuse server goroutines, want at most %d", afterR, maxReaders)
	}
	if afterF > baseF {
		t.Errorf("%d file descriptors after 1,000 cycles, %d before", afterF, baseF)
	}
}
