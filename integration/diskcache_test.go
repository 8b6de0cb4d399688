package integration

import (
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"

	nethttp "net/http"

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
	readMountData(t, m.dir, rs.v3)
	info, err := os.ReadFile(filepath.Join(m.dir, "info.txt"))
	if err != nil || !strings.Contains(string(info), "disk cache: "+cache) || !strings.Contains(string(info), "hit rate") {
		t.Errorf("root info.txt: %v\n%s\nwant a disk cache line", err, info)
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
