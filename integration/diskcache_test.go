package integration

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	nethttp "net/http"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/remote/remotetest"
)

// stopMount stops a mount with SIGTERM and waits for its process.
func stopMount(t *testing.T, m *mounted) {
	t.Helper()
	m.cmd.Process.Signal(syscall.SIGTERM)
	<-m.exited
	unmount(m.dir)
}

// chunkRequests returns the requests of paths (remotetest's "METHOD path
// [range]") that are not for metadata documents.
func chunkRequests(paths []string) []string {
	var out []string
	for _, p := range paths {
		f := strings.Fields(p)
		if len(f) < 2 {
			continue
		}
		switch path.Base(f[1]) {
		case "zarr.json", ".zarray", ".zgroup", ".zattrs", ".zmetadata":
			continue
		}
		out = append(out, p)
	}
	return out
}

// TestRemoteDiskCache mounts an HTTP store with --cache-dir, reads every
// array (compared with zarrita's bytes), unmounts, and mounts again with
// the same folder: the second mount reads the same bytes with no chunk
// request at all (its metadata documents are checked with the store, 304),
// and its root info.txt shows the hit rate. Then every cache file is
// damaged by hand: a third mount reads the right bytes again from the
// store. Last, with the store answering 503 to everything, a mount with
// --cache-offline serves what the folder holds.
func TestRemoteDiskCache(t *testing.T) {
	needFuse(t)
	rs := remoteData(t)
	url, srv := serveHTTP(t, rs.root)
	cache := t.TempDir()
	store := url + "/v3cons"

	m := mountStore(t, store, "--cache-dir", cache)
	readMountData(t, m.dir, rs.v3)
	stopMount(t, m)
	if first := chunkRequests(srv.Paths()); len(first) == 0 {
		t.Fatalf("first mount: no chunk requests")
	}
	srv.Counts()

	m = mountStore(t, store, "--cache-dir", cache)
	before, _ := os.ReadFile(filepath.Join(m.dir, "info.txt"))
	readMountData(t, m.dir, rs.v3)
	info, err := os.ReadFile(filepath.Join(m.dir, "info.txt"))
	if err != nil || !strings.Contains(string(info), "disk cache: "+cache) || !strings.Contains(string(info), "hit rate 9") ||
		len(info) != len(before) || string(info) == string(before) {
		t.Errorf("root info.txt before the reads:\n%s\nafter: %v\n%s\nwant a disk cache line, hit rate over 90%%, the same size", before, err, info)
	}
	stopMount(t, m)
	paths := srv.Paths()
	counts := srv.Counts()
	if chunks := chunkRequests(paths); len(chunks) != 0 {
		t.Errorf("second mount with the same --cache-dir: %d chunk requests (%q); want none", len(chunks), chunks)
	}
	t.Logf("second mount: %v", counts)

	// Damage every entry: a flipped byte in some, cut short in others.
	n := 0
	filepath.Walk(filepath.Join(cache, "zarrfs-cache-v1"), func(p string, fi os.FileInfo, err error) error {
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		b, _ := os.ReadFile(p)
		if n++; n%2 == 0 && len(b) > 0 {
			b[len(b)-1] ^= 0x55
		} else {
			b = b[:len(b)/2]
		}
		os.WriteFile(p, b, 0o644)
		return nil
	})
	if n == 0 {
		t.Fatal("no cache files")
	}
	m = mountStore(t, store, "--cache-dir", cache)
	readMountData(t, m.dir, rs.v3)
	stopMount(t, m)
	if chunks := chunkRequests(srv.Paths()); len(chunks) == 0 {
		t.Errorf("after damaging every cache file: no chunk requests; want them read again")
	}
	if !strings.Contains(m.stderr.String(), "corrupt cache entry") {
		t.Errorf("no log line about damaged entries:\n%s", m.stderr.String())
	}

	// Two mounts at once on a new folder, reading the same arrays at the
	// same time: each request (path and range) is made once in all.
	shared := t.TempDir()
	m1 := mountStore(t, store, "--cache-dir", shared)
	m2 := mountStore(t, store, "--cache-dir", shared)
	srv.Counts()
	var wg sync.WaitGroup
	for _, mm := range []*mounted{m1, m2} {
		wg.Go(func() { readMountData(t, mm.dir, rs.v3) })
	}
	wg.Wait()
	stopMount(t, m1)
	stopMount(t, m2)
	seen := map[string]int{}
	for _, p := range chunkRequests(srv.Paths()) {
		if seen[p]++; seen[p] == 2 {
			t.Errorf("two mounts on one folder: %q requested twice", p)
		}
	}
	if len(seen) == 0 {
		t.Errorf("two mounts on a new folder: no chunk requests")
	}

	// The store down: --cache-offline serves the folder.
	srv.SetFault(func(*nethttp.Request, int64) remotetest.Action { return remotetest.Action{Status: 503} })
	defer srv.SetFault(nil)
	m = mountStore(t, store, "--cache-dir", cache, "--cache-offline", "--store-retries", "0")
	readMountData(t, m.dir, rs.v3)
	stopMount(t, m)
	if !strings.Contains(m.stderr.String(), "--cache-offline") {
		t.Errorf("offline mount: no log line saying it serves the cache:\n%s", m.stderr.String())
	}
}

// TestLiveDiskCache: a --live mount with --cache-dir reads a's chunks,
// zarr-python rewrites one of them, and a second --live mount with the
// same folder revalidates every chunk it holds with a conditional GET:
// the nine unchanged are answered 304 and read from disk, the rewritten
// one is read again, and cat shows the new values.
func TestLiveDiskCache(t *testing.T) {
	needFuse(t)
	peertest.NeedPython(t)
	url, counter, rewrite := liveHTTPStore(t)
	cache := t.TempDir()
	m := mountStore(t, url, "--live", "1m", "--cache-dir", cache)
	want := int32Bytes(40000, 1)
	sameBytes(t, "a/data before", run(t, "cat", filepath.Join(m.dir, "a", "data")), want)
	stopMount(t, m)
	if n := counter.take(); n["GET 200"] != 10 || len(n) != 1 {
		t.Fatalf("the first read of a's 10 chunks: %v; want 10 GETs", n)
	}
	rewrite()
	for i := range 4000 {
		v := uint32(-int32(i))
		copy(want[4*(12000+i):], []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
	}
	m = mountStore(t, url, "--live", "1m", "--cache-dir", cache)
	sameBytes(t, "a/data after the rewrite", run(t, "cat", filepath.Join(m.dir, "a", "data")), want)
	stopMount(t, m)
	if n := counter.take(); n["conditional GET 304"] != 9 || n["conditional GET 200"] != 1 || n["GET 200"] != 0 {
		t.Errorf("a second live mount with the cache: %v; want 9 conditional GETs answered 304 and 1 answered 200", n)
	}
}

// TestDiskCacheKilled: the daemon killed (SIGKILL) while it reads a slow
// store through --cache-dir; a new mount with the same folder reads every
// array right (zarrita's bytes), and leaves no temporary or lock file.
func TestDiskCacheKilled(t *testing.T) {
	needFuse(t)
	rs := remoteData(t)
	url, srv := serveHTTP(t, rs.root)
	cache := t.TempDir()
	store := url + "/v3cons"
	srv.SetFault(func(*nethttp.Request, int64) remotetest.Action {
		return remotetest.Action{Delay: 20 * time.Millisecond}
	})
	m := mountStore(t, store, "--cache-dir", cache)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for _, a := range rs.v3 {
			os.ReadFile(filepath.Join(m.dir, a.Path, a.File)) // cut short by the kill
		}
	}()
	time.Sleep(300 * time.Millisecond)
	m.cmd.Process.Signal(syscall.SIGKILL)
	<-m.exited
	<-done
	unmount(m.dir)
	srv.SetFault(nil)

	m = mountStore(t, store, "--cache-dir", cache)
	readMountData(t, m.dir, rs.v3)
	stopMount(t, m)
	filepath.Walk(cache, func(p string, fi os.FileInfo, err error) error {
		if err == nil && (strings.Contains(fi.Name(), ".tmp") || strings.HasSuffix(fi.Name(), ".lock")) {
			t.Errorf("left after a new mount: %s", p)
		}
		return nil
	})
}
