package integration

import (
	"bytes"
	"fmt"
	"io"
	nethttp "net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store/remote/remotetest"
)

// The tests of issue 36: work and memory bounded by what is asked. A
// valid v3 array of 10^11 uint8 elements in one-element chunks, none
// stored (every element the fill value, 7): a 1 MiB read is quick and
// small, and a reader killed in the middle of reading it leaves the daemon
// idle. The figures go to the test's log; the limits are the issue's
// goals, generous for what the fixed code measures (see TESTING.md).

// tinyChunksDoc is the array's zarr.json.
const tinyChunksDoc = `{"zarr_format": 3, "node_type": "array", "shape": [100000000000], "data_type": "uint8",
 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1]}},
 "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
 "fill_value": 7, "codecs": [{"name": "bytes"}]}`

// tinyStore writes a store whose node "tiny" is the array.
func tinyStore(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "tiny.zarr")
	writeTree(t, root, map[string][]byte{
		"zarr.json":      []byte(`{"zarr_format": 3, "node_type": "group"}`),
		"tiny/zarr.json": []byte(tinyChunksDoc),
	})
	return root
}

// Limits: the goals.
const (
	tinyMaxRSS   = 512 << 10 // kB of peak resident memory
	tinyIdleCPU  = 0.05      // of a core, 3 s after the reader is killed
	tinyReadTime = 20 * time.Second
)

// cpuSeconds returns the user and system CPU time process pid has used.
func cpuSeconds(pid int) (float64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	i := bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[i+1:]))
	// After the command: state is field 3 of stat, utime 14, stime 15.
	if i < 0 || len(f) < 13 {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc/%d/stat: %q", pid, b)
	}
	return float64(u+s) / 100, nil // USER_HZ
}

// cpuShare returns the share of a core process pid uses over d.
func cpuShare(t *testing.T, pid int, d time.Duration) float64 {
	t.Helper()
	c0, err := cpuSeconds(pid)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	time.Sleep(d)
	c1, err := cpuSeconds(pid)
	if err != nil {
		t.Fatal(err)
	}
	return (c1 - c0) / time.Since(start).Seconds()
}

// killedReaderLeavesIdle starts a cat of data, kills it after a second,
// and checks that 3 s later the daemon (pid) uses under tinyIdleCPU of a
// core, measured over 2 s, and has peaked under tinyMaxRSS. mark, when
// not nil, is called right after the kill (0) and after the 3 s (3 s).
func killedReaderLeavesIdle(t *testing.T, pid int, data string, mark func(after time.Duration)) {
	t.Helper()
	reader := exec.Command("cat", data)
	reader.Stdout = io.Discard
	if err := reader.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	reader.Process.Signal(syscall.SIGKILL)
	reader.Wait()
	if mark != nil {
		mark(0)
	}
	time.Sleep(3 * time.Second)
	if mark != nil {
		mark(3 * time.Second)
	}
	share := cpuShare(t, pid, 2*time.Second)
	hwm, _ := procStatus(pid, "VmHWM")
	t.Logf("3 s after the reader was killed: daemon at %.1f%% of a core; peak RSS %.1f MiB", 100*share, float64(hwm)/1024)
	if share > tinyIdleCPU {
		t.Errorf("the daemon uses %.0f%% of a core 3 s after its reader was killed; want under %.0f%%", 100*share, 100*tinyIdleCPU)
	}
	if hwm > tinyMaxRSS {
		t.Errorf("daemon peak RSS %d kB; want under %d kB", hwm, tinyMaxRSS)
	}
}

// TestTinyChunksMount reads 1 MiB of the array through a mount with dd
// (a subprocess), then kills a cat of the whole file mid-read: 3 s later
// the daemon is idle and the mount still answers.
func TestTinyChunksMount(t *testing.T) {
	root := tinyStore(t)
	m := mountChecked(t, root)
	pid := m.cmd.Process.Pid
	data := filepath.Join(m.dir, "tiny", "data")
	if st, err := os.Stat(data); err != nil || st.Size() != 1e11 {
		t.Fatalf("stat %s: %v, %v; want 10^11 bytes", data, st, err)
	}
	took, out, stderr, err := timed("head", "-c", "1048576", data)
	if err != nil || !bytes.Equal(out, bytes.Repeat([]byte{7}, 1<<20)) {
		t.Fatalf("head -c 1MiB: %v, %d bytes (%s); want 1 MiB of the fill value 7", err, len(out), stderr)
	}
	hwm, err := procStatus(pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("1 MiB of 10^6 one-element chunks read in %v; daemon peak RSS %.1f MiB", took.Round(time.Millisecond), float64(hwm)/1024)
	if took > tinyReadTime || hwm > tinyMaxRSS {
		t.Errorf("1 MiB read in %v with the daemon at %d kB peak; want within %v and %d kB", took, hwm, tinyReadTime, tinyMaxRSS)
	}

	// A reader of the whole file (100 GB), killed after a second.
	killedReaderLeavesIdle(t, pid, data, nil)
	// The mount still answers: far into the array, and its metadata.
	start := time.Now()
	out = run(t, "dd", "if="+data, "bs=4096", "skip=12345678", "count=1", "status=none")
	if !bytes.Equal(out, bytes.Repeat([]byte{7}, 4096)) {
		t.Errorf("a read at 50 GB: %d bytes, not the fill value", len(out))
	}
	if _, err := os.ReadFile(filepath.Join(m.dir, "tiny", "zarr.json")); err != nil {
		t.Error(err)
	}
	t.Logf("the mount answers: a read at 50 GB in %v", time.Since(start).Round(time.Millisecond))
	stopClean(t, m)
}

// TestTinyChunksCat: zarrfs cat of the array into a pipe whose reader
// takes 1 MiB and goes: cat gives the bytes quickly, in little memory, and
// exits at once when the pipe breaks.
func TestTinyChunksCat(t *testing.T) {
	root := tinyStore(t)
	cmd := exec.Command(zarrfsBin, "cat", root, "tiny")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 1<<20)
	if _, err := io.ReadFull(pipe, got); err != nil || !bytes.Equal(got, bytes.Repeat([]byte{7}, 1<<20)) {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("the first MiB: %v (%s)", err, stderr.String())
	}
	took := time.Since(start)
	// The peak so far, from the process's own memory: its rusage's
	// ru_maxrss would not do, as exec(2) seeds it with the high-water
	// mark of the memory it replaced, which os/exec's vfork shares with
	// this test binary (hundreds of MiB after the large-tree tests).
	hwm, err := procStatus(cmd.Process.Pid, "VmHWM")
	if err != nil {
		t.Fatal(err)
	}
	pipe.Close() // the reader goes: the pipe breaks
	closed := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(3 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("zarrfs cat goes on 3 s after its pipe broke")
	}
	rss := hwm
	t.Logf("1 MiB in %v; exited %v after the pipe broke (%v); peak RSS %.1f MiB", took.Round(time.Millisecond),
		time.Since(closed).Round(time.Millisecond), err, float64(rss)/1024)
	if took > tinyReadTime || rss > tinyMaxRSS {
		t.Errorf("1 MiB in %v at %d kB peak; want within %v and %d kB", took, rss, tinyReadTime, tinyMaxRSS)
	}
}

// TestTinyChunksCatHTTPPipeGone: over HTTP, which cannot list, every
// one-element chunk is a request, so zarrfs cat takes long before its
// first write; a reader that goes at once still ends it within 3 s, and
// no request follows (cat watches its pipe).
func TestTinyChunksCatHTTPPipeGone(t *testing.T) {
	url, srv := serveHTTP(t, tinyStore(t))
	var requests atomic.Int64
	srv.SetFault(func(*nethttp.Request, int64) remotetest.Action {
		requests.Add(1)
		return remotetest.Action{}
	})
	cmd := exec.Command(zarrfsBin, "cat", url, "tiny")
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(500 * time.Millisecond) // reading chunk after chunk
	pipe.Close()
	closed := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(3 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatal("zarrfs cat over HTTP goes on 3 s after its pipe broke")
	}
	took := time.Since(closed)
	// Requests sent just before the exit may reach the server after it:
	// count from a moment later.
	time.Sleep(100 * time.Millisecond)
	before := requests.Load()
	time.Sleep(200 * time.Millisecond)
	t.Logf("exited %v after the pipe broke (%v, %q); %d requests", took.Round(time.Millisecond), err, stderr.String(), before)
	if after := requests.Load(); after != before {
		t.Errorf("%d requests after zarrfs cat exited", after-before)
	}
}

// TestTinyChunksMountHTTPReaderKilled: through a mount of the array over
// HTTP (no listing: a request per chunk), a cat of the data killed after
// a second leaves the daemon idle 3 s later, its background read-ahead
// requests included (they end when their caller is gone), and the mount
// answers.
func TestTinyChunksMountHTTPReaderKilled(t *testing.T) {
	url, srv := serveHTTP(t, tinyStore(t))
	var requests atomic.Int64
	srv.SetFault(func(*nethttp.Request, int64) remotetest.Action {
		requests.Add(1)
		return remotetest.Action{}
	})
	m := mountChecked(t, url+"/tiny")
	pid := m.cmd.Process.Pid
	data := filepath.Join(m.dir, "data")
	var killed, at3s int64
	killedReaderLeavesIdle(t, pid, data, func(after time.Duration) {
		if after == 0 {
			killed = requests.Load()
		} else {
			at3s = requests.Load()
		}
	})
	t.Logf("%d requests before the kill, %d more in the 3 s after, %d in the 2 s after that",
		killed, at3s-killed, requests.Load()-at3s)
	if _, err := os.ReadFile(filepath.Join(m.dir, "zarr.json")); err != nil {
		t.Errorf("the mount does not answer: %v", err)
	}
	out := run(t, "dd", "if="+data, "bs=1", "skip=12345678901", "count=1", "status=none", "iflag=direct")
	if !bytes.Equal(out, []byte{7}) {
		t.Errorf("a byte at 12 GB: %q, not the fill value", out)
	}
	stopClean(t, m)
}
