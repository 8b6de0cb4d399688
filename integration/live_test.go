package integration

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/remote/remotetest"
	"github.com/zarrfs/zarrfs/store/s3"
	"github.com/zarrfs/zarrfs/store/s3/s3test"
)

// liveProgram writes, with zarr-python, the v2 hierarchy the --live tests
// change under a mount. "before": a (int32, 100 elements, chunks of 10)
// holding 0..99, and b. "after": a resized to 150 elements holding
// 2*(0..149), b deleted, c created. It prints nothing; the references are
// computed by the test.
const liveProgram = `
import sys, shutil, numpy as np, zarr
path, step = sys.argv[1], sys.argv[2]
if step == "before":
    g = zarr.open_group(zarr.DirectoryStore(path), mode="w")
    g.create_dataset("a", data=np.arange(100, dtype="<i4"), chunks=(10,))
    g.create_dataset("b", data=np.ones(8, dtype="<f8"), chunks=(4,))
else:
    g = zarr.open_group(zarr.DirectoryStore(path), mode="a")
    a = g["a"]
    a.resize(150)
    a[:] = np.arange(150, dtype="<i4") * 2
    del g["b"]
    g.create_dataset("c", data=np.arange(6, dtype="<u2"), chunks=(3,))
`

// int32Bytes returns the little-endian bytes of mul*(0..n-1).
func int32Bytes(n, mul int) []byte {
	var b bytes.Buffer
	for i := range n {
		v := uint32(i * mul)
		b.Write([]byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
	}
	return b.Bytes()
}

// TestLiveMount changes a hierarchy under two mounts of it, one with
// --live 1s and one without, and reads both through the kernel in
// subprocesses: the live mount shows the new shape, values and children
// once the TTL has passed and its view was renewed; the other keeps what it showed (metadata and
// listings are cached for the mount's life). The same runs against an S3
// bucket on versitygw, the store changed by uploads and deletes.
func TestLiveMount(t *testing.T) {
	needFuse(t)
	peertest.NeedPython(t)
	t.Run("dir", func(t *testing.T) {
		store := filepath.Join(t.TempDir(), "live.zarr")
		peertest.RunPython(t, liveProgram, store, "before")
		testLive(t, store, func() { peertest.RunPython(t, liveProgram, store, "after") })
	})
	t.Run("s3", func(t *testing.T) {
		srv := startS3(t)
		srv.MakeBucket("live")
		local := filepath.Join(t.TempDir(), "live.zarr")
		peertest.RunPython(t, liveProgram, local, "before")
		upload(t, srv, local, "live", "h.zarr/")
		testLive(t, "s3://live/h.zarr", func() {
			peertest.RunPython(t, liveProgram, local, "after")
			// The objects of b go, then everything now there is put.
			st, err := s3.New("live", "h.zarr/", s3.Options{Endpoint: srv.Endpoint, AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			for _, key := range []string{"b/.zarray", "b/0", "b/1"} {
				if err := st.Delete(context.Background(), key); err != nil {
					t.Fatal(err)
				}
			}
			upload(t, srv, local, "live", "h.zarr/")
		})
	})
}

// testLive mounts store live and not, checks both show the "before"
// hierarchy, calls change, and checks what each shows after the TTL.
func testLive(t *testing.T, store string, change func()) {
	live := mountStore(t, store, "--live", "1s")
	fixed := mountStore(t, store)
	before, after := int32Bytes(100, 1), int32Bytes(150, 2)
	for _, m := range []*mounted{live, fixed} {
		sameBytes(t, "a/data before the change", run(t, "cat", filepath.Join(m.dir, "a", "data")), before)
	}
	change()
	// The live mount renews its view in the background once it is older
	// than the TTL, answering from the old one meanwhile: wait until the
	// new one shows (an access starts the renewal).
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if fi, err := os.Stat(filepath.Join(live.dir, "a", "data")); err == nil && fi.Size() == int64(len(after)) {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the live mount still shows a/data as %v, %v 30 s after the change", fi, err)
		}
	}

	sameBytes(t, "live a/data after the change", run(t, "cat", filepath.Join(live.dir, "a", "data")), after)
	sameBytes(t, "live c/data", run(t, "cat", filepath.Join(live.dir, "c", "data")), []byte{0, 0, 1, 0, 2, 0, 3, 0, 4, 0, 5, 0})
	if got := lsNames(t, live.dir); !slices.Equal(got, []string{".zgroup", "a", "c", "dataset.nc", "info.txt"}) {
		t.Errorf("live root lists %q after b was deleted and c created", got)
	}
	if _, err := os.Stat(filepath.Join(live.dir, "b")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("stat of the deleted b on the live mount: %v, want ENOENT", err)
	}
	if fi, err := os.Stat(filepath.Join(live.dir, "a", "data.npy")); err != nil || fi.Size() != 128+150*4 {
		t.Errorf("live a/data.npy after the resize: %v, %v, want %d bytes", fi, err, 128+150*4)
	}

	// Without --live, what was shown stays: the shape, and the listing.
	if fi, err := os.Stat(filepath.Join(fixed.dir, "a", "data")); err != nil || fi.Size() != 100*4 {
		t.Errorf("a/data on the mount without --live: %v, %v, want the 400 bytes it showed", fi, err)
	}
	if got := lsNames(t, fixed.dir); !slices.Equal(got, []string{".zgroup", "a", "b", "dataset.nc", "info.txt"}) {
		t.Errorf("the mount without --live lists %q, want what it listed before", got)
	}
	if strings.Contains(live.stderr.String(), "--live") {
		t.Errorf("the live mount logged a failed refresh:\n%s", live.stderr.String())
	}
}

// lsNames lists dir with ls(1) in a subprocess.
func lsNames(t *testing.T, dir string) []string {
	t.Helper()
	return strings.Fields(string(run(t, "ls", "-A", dir)))
}

// TestLiveAnswersWhileRenewalHangs mounts a consolidated HTTP store with
// --live, reads an array and lists the tree, then makes the server hang
// every request: once the TTL has passed, an access starts a renewal that
// hangs, and stat, ls -l and a read of the array still answer from the view
// they were read from while it hangs (the store timeout is a minute, the
// hang lasts until the test ends; how long each took is logged, not
// asserted). That view must still be the mount's first: a renewal that
// succeeded during the reads would have made a new one, whose files are
// new inodes read from the store again. So the reads must end within the
// TTL of mounting; on a machine too slow for that, the test mounts again
// with twice the TTL.
func TestLiveAnswersWhileRenewalHangs(t *testing.T) {
	needFuse(t)
	rs := remoteData(t)
	url, srv := serveHTTP(t, rs.root)
	var arr mountArray
	for _, a := range rs.v3 {
		if a.File == "data" && a.Unsupported == "" && !strings.Contains(a.Path, "/") {
			arr = a
			break
		}
	}
	if arr.Path == "" {
		t.Fatal("no top-level array in the remote fixture")
	}
	ref, err := os.ReadFile(arr.Ref)
	if err != nil {
		t.Fatal(err)
	}
	var m *mounted
	var data string
	var expires time.Time // by then the first view has expired
	for ttl := 2 * time.Second; ; ttl *= 2 {
		if ttl > 16*time.Second {
			t.Fatal("reading the mount took longer than 16 s every time")
		}
		start := time.Now()
		m = mountStore(t, url+"/v3cons", "--live", ttl.String(), "--store-timeout", "1m")
		expires = time.Now().Add(ttl)
		data = filepath.Join(m.dir, arr.Path, "data")
		sameBytes(t, arr.Path+" before", run(t, "cat", data), ref)
		// What the commands below ask is read before the store hangs (a
		// document's stored bytes are fetched at its first stat).
		run(t, "ls", "-lR", m.dir)
		if time.Since(start) < ttl {
			break
		}
		t.Logf("mounting and reading took %v, more than --live %v: mounting again", time.Since(start).Round(time.Millisecond), ttl)
		unmount(m.dir)
	}
	srv.Counts()
	srv.SetFault(func(*nethttp.Request, int64) remotetest.Action { return remotetest.Action{Hang: true} })
	time.Sleep(time.Until(expires) + 200*time.Millisecond)
	// This stat starts the renewal, which hangs on the server.
	start := time.Now()
	if _, stderr, err := runTool("stat", data); err != nil {
		t.Fatalf("stat while the store hangs: %v %s", err, stderr)
	}
	for deadline := time.Now().Add(20 * time.Second); len(srv.Counts()) == 0; time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("no renewal reached the server")
		}
		runTool("stat", data) // in case the kernel answered the first from its cache
	}
	for _, cmd := range [][]string{{"stat", data}, {"ls", "-l", m.dir}, {"ls", "-l", filepath.Join(m.dir, arr.Path)}, {"cmp", data, arr.Ref}} {
		c := time.Now()
		if _, stderr, err := runTool(cmd[0], cmd[1:]...); err != nil {
			t.Errorf("%v while the renewal hangs: %v %s", cmd, err, stderr)
		}
		t.Logf("%v answered in %v while the renewal hangs", cmd, time.Since(c).Round(time.Millisecond))
	}
	t.Logf("all answered within %v of the renewal's start", time.Since(start).Round(time.Millisecond))
}

// statuses counts the answers of an HTTP handler by request kind and status.
type statuses struct {
	next nethttp.Handler
	mu   sync.Mutex
	n    map[string]int
}

type statusWriter struct {
	nethttp.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	w.code = code
	w.ResponseWriter.WriteHeader(code)
}

func (s *statuses) ServeHTTP(w nethttp.ResponseWriter, r *nethttp.Request) {
	sw := &statusWriter{ResponseWriter: w, code: nethttp.StatusOK}
	s.next.ServeHTTP(sw, r)
	kind := "GET"
	if r.Header.Get("If-None-Match") != "" || r.Header.Get("If-Modified-Since") != "" {
		kind = "conditional GET"
	}
	if r.Method == nethttp.MethodGet && strings.Contains(r.URL.Path, "/a/") && !strings.Contains(r.URL.Path, "/.z") {
		s.mu.Lock()
		s.n[fmt.Sprintf("%s %d", kind, sw.code)]++
		s.mu.Unlock()
	}
}

func (s *statuses) take() map[string]int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.n
	s.n = map[string]int{}
	return n
}

// liveHTTPStore serves over HTTP a v2 store (consolidated: HTTP cannot be
// listed) that zarr-python wrote: an array a of 40,000 int32 (its index)
// in ten chunks. It returns the store's URL, the server's count of
// answers, and rewrite, which has zarr-python overwrite the fourth chunk
// with the negated index.
func liveHTTPStore(t *testing.T) (url string, counter *statuses, rewrite func()) {
	t.Helper()
	root := t.TempDir()
	store := filepath.Join(root, "live.zarr")
	const program = `
import sys, numpy as np, zarr
path, step = sys.argv[1], sys.argv[2]
if step == "before":
    g = zarr.open_group(zarr.DirectoryStore(path), mode="w")
    g.create_dataset("a", data=np.arange(40000, dtype="<i4"), chunks=(4000,))
    zarr.consolidate_metadata(path)  # an HTTP store cannot be listed
else:
    zarr.open_group(zarr.DirectoryStore(path), mode="a")["a"][12000:16000] = -np.arange(4000, dtype="<i4")
`
	peertest.RunPython(t, program, store, "before")
	counter = &statuses{next: &remotetest.Server{Dir: root}, n: map[string]int{}}
	ts := httptest.NewServer(counter)
	t.Cleanup(ts.Close)
	return ts.URL + "/live.zarr", counter, func() { peertest.RunPython(t, program, store, "after") }
}

// TestLiveRereadsOnlyWhatChanged: a --live mount of an HTTP store
// (consolidated), once its view is renewed, asks for the chunks it holds
// decoded with conditional GETs: the nine unchanged chunks of a are
// answered 304 Not Modified and kept, the one zarr-python rewrote is read
// again, and cat shows the new values. (cat reads a sequentially, which
// decodes and caches whole chunks.)
func TestLiveRereadsOnlyWhatChanged(t *testing.T) {
	needFuse(t)
	peertest.NeedPython(t)
	url, counter, rewrite := liveHTTPStore(t)
	m := mountStore(t, url, "--live", "1s")
	data := filepath.Join(m.dir, "a", "data")
	want := int32Bytes(40000, 1)
	sameBytes(t, "a/data before", run(t, "cat", data), want)
	if n := counter.take(); n["GET 200"] != 10 || len(n) != 1 {
		t.Fatalf("the first read of a's 10 chunks: %v; want 10 GETs", n)
	}
	rewrite()
	for i := range 4000 {
		v := uint32(-int32(i))
		copy(want[4*(12000+i):], []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)})
	}
	// The view is renewed once older than the TTL, at an access, in the
	// background: read until the new values show.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(300 * time.Millisecond) {
		if bytes.Equal(run(t, "cat", data), want) {
			break
		} else if time.Now().After(deadline) {
			t.Fatal("the live mount does not show the rewritten chunk 30 s after the change")
		}
	}
	if n := counter.take(); n["conditional GET 304"] != 9 || n["conditional GET 200"] != 1 || n["GET 200"] != 0 {
		t.Errorf("reading a again after the renewal: %v; want 9 conditional GETs answered 304 and 1 answered 200", n)
	}
}
