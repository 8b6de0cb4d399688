package integration

import (
	archivezip "archive/zip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	nethttp "net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/deadline"
	httpstore "github.com/zarrfs/zarrfs/store/http"
	"github.com/zarrfs/zarrfs/store/remote"
	"github.com/zarrfs/zarrfs/store/remote/remotetest"
	"github.com/zarrfs/zarrfs/store/storeurl"
	"github.com/zarrfs/zarrfs/zarr"
)

// TestRemoteS3Peers copies zarr-python's v2 store and zarrita's v3 store
// (with a sharded array; also consolidated) into a versitygw bucket, mounts them as
// s3://bucket/prefix and compares every array and the listing with the
// peers; `zarrfs cat` from S3 is checked for a sample.
func TestRemoteS3Peers(t *testing.T) {
	needFuse(t)
	rs := remoteData(t)
	srv := startS3(t)
	srv.MakeBucket("peers")
	upload(t, srv, filepath.Join(rs.root, "v2"), "peers", "v2.zarr")
	upload(t, srv, filepath.Join(rs.root, "v3"), "peers", "deep/v3.zarr")
	upload(t, srv, filepath.Join(rs.root, "v3cons"), "peers", "v3cons.zarr")

	t.Run("v3", func(t *testing.T) {
		m := mountStore(t, "s3://peers/deep/v3.zarr")
		checkTree(t, filepath.Join(rs.root, "v3"), m.dir, nil)
		readMountData(t, m.dir, rs.v3)
	})
	t.Run("v3-consolidated", func(t *testing.T) {
		m := mountStore(t, "s3://peers/v3cons.zarr")
		checkTree(t, filepath.Join(rs.root, "v3"), m.dir, nil)
		readMountData(t, m.dir, rs.v3)
	})
	t.Run("request-count", func(t *testing.T) {
		proxy := &remotetest.Proxy{Target: srv.Endpoint}
		ps := httptest.NewServer(proxy)
		defer ps.Close()
		mustZarrfs(t, "info", "--s3-endpoint", ps.URL, "s3://peers/v3cons.zarr", "sharded")
		if c := proxy.Counts(); c["GET"]+c["GET range"] != 2 || len(c) != 1 {
			t.Errorf("zarrfs info of a consolidated v3 hierarchy in S3 sent %v; want two GETs (zarr.json, and .zmetadata at once)", c)
		}
	})
	t.Run("v2-find-request-count", func(t *testing.T) {
		// find over a mount of a v2 hierarchy without .zmetadata reads
		// each document once, and asks for few that are missing: a page
		// listed below each group shows which documents its first
		// children lack (most arrays have no .zattrs); only beyond the
		// first page of a large group, and at the root before any
		// listing, are documents probed.
		docs := 0
		filepath.WalkDir(filepath.Join(rs.root, "v2"), func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() && (d.Name() == ".zarray" || d.Name() == ".zattrs" || d.Name() == ".zgroup") {
				docs++
			}
			return err
		})
		proxy := &remotetest.Proxy{Target: srv.Endpoint}
		ps := httptest.NewServer(proxy)
		defer ps.Close()
		m := mountStore(t, "s3://peers/v2.zarr", "--s3-endpoint", ps.URL, "--s3-path-style")
		proxy.Counts()
		run(t, "find", m.dir)
		c := proxy.Counts()
		t.Logf("find over %d documents: %v", docs, c)
		// At most each document once and a tenth more in probes; at
		// least most of them (every node's own .zarray or .zgroup: a
		// stored document that only a stat or an open shows, such as
		// .zattrs, may go unread by find, and how many does depends on
		// how far the walk ahead got, 344 to 357 of 348 measured).
		if got := c["GET range"]; got < docs*3/4 || got > docs+docs/10 {
			t.Errorf("find over an S3 mount of a v2 hierarchy of %d documents sent %v; want %d to %d ranged GETs",
				docs, c, docs*3/4, docs+docs/10)
		}
	})
	t.Run("v2", func(t *testing.T) {
		m := mountStore(t, "s3://peers/v2.zarr", "--s3-path-style")
		checkTree(t, filepath.Join(rs.root, "v2"), m.dir, rs.v2vlen)
		readMountData(t, m.dir, rs.v2)
	})
	t.Run("cat", func(t *testing.T) {
		for i, a := range append(rs.v2, rs.v3...) {
			if i%12 != 0 && a.Path != "sharded" || a.Unsupported != "" {
				continue
			}
			spec := "s3://peers/v2.zarr"
			if i >= len(rs.v2) {
				spec = "s3://peers/deep/v3.zarr"
			}
			r := catArray(t, spec, a.Path)
			if r.err != nil {
				t.Errorf("zarrfs cat %s %s: %v\n%s", spec, a.Path, r.err, r.stderr)
				continue
			}
			want, _ := os.ReadFile(a.Ref)
			sameBytes(t, "zarrfs cat "+spec+" "+a.Path, r.stdout, want)
		}
	})
}

// TestRemoteS3WriteThenPeerReads: zarrfs writes its example hierarchy
// through the S3 store; zarr-python reads a v2 array and zarrita a v3
// array of it back from the bucket's directory, equal to zarrfs cat.
func TestRemoteS3WriteThenPeerReads(t *testing.T) {
	remoteData(t) // the peers are present
	srv := startS3(t)
	dir := srv.MakeBucket("written")
	mustZarrfs(t, "example", "s3://written/ex.zarr")
	local := filepath.Join(dir, "ex.zarr")
	data, errs := zarritaRead(t, itemsIn(local, []string{"temperature"}))
	if errs[0] != nil {
		t.Fatalf("zarrita reading what zarrfs wrote through S3: %v", errs[0])
	}
	sameBytes(t, "zarrita's read of temperature", mustZarrfs(t, "cat", "s3://written/ex.zarr", "temperature"), data[0])
	pyData, pyErrs := pythonRead(t, itemsIn(filepath.Join(local, "v2"), []string{"precipitation"}))
	if pyErrs[0] != nil {
		t.Fatalf("zarr-python reading what zarrfs wrote through S3: %v", pyErrs[0])
	}
	sameBytes(t, "zarr-python's read of v2/precipitation", mustZarrfs(t, "cat", "s3://written/ex.zarr/v2", "precipitation"), pyData[0])
}

// TestRemoteHTTPPeers serves the consolidated stores over HTTP (no
// listing: the hierarchy comes from consolidated metadata) and the zipped
// v3 store, mounts them and compares with the peers.
func TestRemoteHTTPPeers(t *testing.T) {
	needFuse(t)
	rs := remoteData(t)
	url, _ := serveHTTP(t, rs.root)
	t.Run("v3-consolidated", func(t *testing.T) {
		m := mountStore(t, url+"/v3cons")
		checkTree(t, filepath.Join(rs.root, "v3"), m.dir, nil)
		readMountData(t, m.dir, rs.v3)
	})
	t.Run("v2-consolidated", func(t *testing.T) {
		m := mountStore(t, url+"/v2cons")
		// The root of a consolidated v2 store also shows .zmetadata.
		readMountData(t, m.dir, rs.v2)
		if _, err := os.Stat(filepath.Join(m.dir, rs.v2[0].Path, "info.txt")); err != nil {
			t.Error(err)
		}
	})
	t.Run("zip", func(t *testing.T) {
		m := mountStore(t, url+"/v3.zip")
		checkTree(t, filepath.Join(rs.root, "v3"), m.dir, nil)
		readMountData(t, m.dir, rs.v3)
	})
	t.Run("not-consolidated", func(t *testing.T) {
		// Named paths work without a listing; ls says why it cannot list.
		a := rs.v3Sharded
		r := catArray(t, url+"/v3", a.Path)
		want, _ := os.ReadFile(a.Ref)
		if r.err != nil {
			t.Fatalf("zarrfs cat %s/v3 %s: %v\n%s", url, a.Path, r.err, r.stderr)
		}
		sameBytes(t, "cat over HTTP without consolidated metadata", r.stdout, want)
		// The array's own URL as the store, with the root as PATH.
		r = catArray(t, url+"/v3/"+a.Path, "/")
		if r.err != nil {
			t.Fatalf("zarrfs cat %s/v3/%s /: %v\n%s", url, a.Path, r.err, r.stderr)
		}
		sameBytes(t, "cat of an array's URL", r.stdout, want)
		r = runZarrfs(t, "ls", url+"/v3")
		if !isCleanExit1(r) || !strings.Contains(string(r.stderr), "cannot list its keys") {
			t.Errorf("zarrfs ls of an HTTP store without consolidated metadata: %v: %s", r.err, r.stderr)
		}
		// The mount: listing the root fails (EOPNOTSUPP), named paths open.
		mnt := mountUnlistable(t, url+"/v3")
		if _, err := os.ReadDir(mnt); !errors.Is(err, syscall.EOPNOTSUPP) {
			t.Errorf("readdir of an unlistable mount: %v; want EOPNOTSUPP", err)
		}
		if _, err := os.Stat(filepath.Join(mnt, "no-such-node")); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("stat of a missing node: %v; want ENOENT", err)
		}
		readMountData(t, mnt, []mountArray{a, rs.v3[0]})
	})
}

// TestRemoteRequestCounts: opening a consolidated v3 or v2 hierarchy takes
// two GETs sent at once (zarr.json and .zmetadata); reading one element of a sharded array takes two ranged GETs (the
// shard index, by its suffix, and the inner chunk).
func TestRemoteRequestCounts(t *testing.T) {
	rs := remoteData(t)
	url, srv := serveHTTP(t, rs.root)
	ctx := context.Background()

	srv.Counts()
	mustZarrfs(t, "info", url+"/v3cons", "sharded")
	if c := srv.Counts(); c["GET"]+c["GET range"] != 2 || len(c) != 1 {
		t.Errorf("zarrfs info of a consolidated v3 hierarchy sent %v; want two GETs (zarr.json, and .zmetadata at once)", c)
	}
	mustZarrfs(t, "info", url+"/v2cons", rs.v2[0].Path)
	if c := srv.Counts(); c["GET"]+c["GET range"] != 2 || len(c) != 1 {
		t.Errorf("zarrfs info of a consolidated v2 hierarchy sent %v; want two GETs (zarr.json missing, .zmetadata, at once)", c)
	}

	hs, err := httpstore.New(url+"/v3cons", httpstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := zarr.Open(ctx, deadline.New(hs, 10*time.Second), zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := h.Node(ctx, "sharded")
	if err != nil || n.Array == nil {
		t.Fatalf("sharded: %v", err)
	}
	srv.Counts()
	ref, _ := os.ReadFile(rs.v3Sharded.Ref)
	cols := rs.shardedShape[1]
	for _, ij := range [][2]int{{57, 63}, {119, 99}, {3, 4}} {
		off := int64(ij[0]*cols+ij[1]) * 4
		var b [4]byte
		if _, err := n.Array.ReadAt(ctx, b[:], off); err != nil {
			t.Fatal(err)
		}
		if want := ref[off : off+4]; string(b[:]) != string(want) {
			t.Errorf("element %v = %v; want %v", ij, math.Float32frombits(binary.LittleEndian.Uint32(b[:])),
				math.Float32frombits(binary.LittleEndian.Uint32(want)))
		}
		paths := srv.Paths()
		if c := srv.Counts(); c["GET range"] != 2 || len(c) != 1 {
			t.Errorf("reading element %v of a sharded array sent %v (%q); want two ranged GETs", ij, c, paths)
		} else if !strings.HasSuffix(paths[0], "bytes=-"+fmt.Sprint(rs.shardedShards[0]/rs.shardedChunks[0]*rs.shardedShards[1]/rs.shardedChunks[1]*16+4)) {
			t.Errorf("first request %q: want a suffix range of the shard index", paths[0])
		}
	}
	// Another element of an inner chunk read before: decoded then and
	// kept, so no request at all.
	ij := [2]int{57 - 57%rs.shardedChunks[0], 63 - 63%rs.shardedChunks[1]}
	at := int64(ij[0]*cols+ij[1]) * 4
	var again [4]byte
	if _, err := n.Array.ReadAt(ctx, again[:], at); err != nil {
		t.Fatal(err)
	}
	if string(again[:]) != string(ref[at:at+4]) {
		t.Errorf("element %v: wrong bytes", ij)
	}
	if c := srv.Counts(); len(c) != 0 {
		t.Errorf("reading element %v, in the inner chunk of element [57 63] read before, sent %v; want nothing", ij, c)
	}
	// A row across a shard no read has touched: its index, then its
	// adjacent inner chunks (5 of them) in one ranged GET, not one each.
	row, width := 85, rs.shardedShards[1]
	off := int64(row*cols) * 4
	b := make([]byte, width*4)
	if _, err := n.Array.ReadAt(ctx, b, off); err != nil {
		t.Fatal(err)
	}
	if want := ref[off : off+int64(len(b))]; string(b) != string(want) {
		t.Errorf("row %d, columns 0-%d: wrong bytes", row, width-1)
	}
	paths := srv.Paths()
	if c := srv.Counts(); c["GET range"] != 2 || len(c) != 1 {
		t.Errorf("reading a row across %d inner chunks of a shard sent %v (%q); want two ranged GETs (index, chunks)",
			width/rs.shardedChunks[1], c, paths)
	}
}

// TestRemoteZipRequestCounts reads the arrays of a zip archive written by
// zarr-python's ZipStore over HTTP, in process and with zarrfs cat, and
// compares them with zarr-python reading the archive. A chunk of 256 KiB
// takes one ranged GET, its local header and data together (before, two:
// the header, then the data); one in the archive's last 256 KiB takes none
// (remote.ReaderAt keeps that tail from reading the central directory).
// Chunks of 4 KiB share the 256 KiB blocks remote.ReaderAt reads short
// reads from, so adjacent members come in one GET.
func TestRemoteZipRequestCounts(t *testing.T) {
	peertest.NeedPython(t)
	dir := t.TempDir()
	zipPath := filepath.Join(dir, "arrays.zip")
	peertest.RunPython(t, `
import sys, numpy as np, zarr
st = zarr.ZipStore(sys.argv[1], mode="w")
rng = np.random.default_rng(26)
for name, shape, chunks in (("big", (4096, 256), (256, 256)), ("small", (512, 512), (16, 64))):
    z = zarr.open_array(store=st, path=name, mode="w", shape=shape, chunks=chunks, dtype="<f4", compressor=None)
    z[...] = rng.standard_normal(shape).astype("<f4")
st.close()
`, zipPath)
	arrays := []string{"big", "small"}
	ref, errs := pythonRead(t, itemsIn(zipPath, arrays))
	for i, err := range errs {
		if err != nil {
			t.Fatalf("zarr-python reading %s: %v", arrays[i], err)
		}
	}

	// The chunk members of each array, and the offsets of their local
	// headers (zipfile writes no extra fields).
	zr, err := archivezip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	fi, err := os.Stat(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	tailOff := fi.Size() - remote.TailSize
	type chunk struct{ header, size int64 }
	chunks := map[string][]chunk{}
	for _, f := range zr.File {
		a, c, _ := strings.Cut(f.Name, "/")
		if strings.HasPrefix(c, ".") {
			continue
		}
		off, err := f.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		chunks[a] = append(chunks[a], chunk{off - 30 - int64(len(f.Name)) - int64(len(f.Extra)), int64(f.CompressedSize64)})
	}

	url, srv := serveHTTP(t, dir)
	ctx := context.Background()
	st, err := storeurl.Open(ctx, url+"/arrays.zip", storeurl.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.(io.Closer).Close()
	h, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i, name := range arrays {
		n, err := h.Node(ctx, name)
		if err != nil || n.Array == nil {
			t.Fatalf("%s: %v", name, err)
		}
		srv.Counts()
		b := make([]byte, len(ref[i]))
		if _, err := n.Array.ReadAt(ctx, b, 0); err != nil {
			t.Fatal(err)
		}
		sameBytes(t, name+" read over HTTP", b, ref[i])
		c := srv.Counts()
		t.Logf("reading %s (%d chunks of %d bytes) sent %v", name, len(chunks[name]), chunks[name][0].size, c)
		if len(c) != 1 || c["GET range"] == 0 {
			t.Errorf("reading %s sent %v; want only ranged GETs", name, c)
		}
		switch name {
		case "big":
			want := 0
			for _, ch := range chunks[name] {
				if ch.header < tailOff {
					want++
				}
			}
			if c["GET range"] != want {
				t.Errorf("reading %d chunks of %s, %d of them before the archive's last %d bytes, sent %d ranged GETs; want %d, one per chunk",
					len(chunks[name]), name, want, remote.TailSize, c["GET range"], want)
			}
		case "small":
			if max := len(chunks[name]) / 8; c["GET range"] > max {
				t.Errorf("reading %d chunks of %s sent %d ranged GETs; want at most %d (adjacent chunks share a GET)",
					len(chunks[name]), name, c["GET range"], max)
			}
		}
	}

	// zarrfs cat: its opening requests, then the same GETs.
	srv.Counts()
	sameBytes(t, "zarrfs cat big", mustZarrfs(t, "cat", url+"/arrays.zip", "big"), ref[0])
	paths := srv.Paths()
	t.Logf("zarrfs cat %s/arrays.zip big sent %v (%q)", url, srv.Counts(), paths)
}

// readErrno reads a whole file and returns the errno it failed with (0
// when it read fine) and how long it took.
func readErrno(path string) (syscall.Errno, time.Duration) {
	start := time.Now()
	_, err := os.ReadFile(path)
	d := time.Since(start)
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno, d
	}
	if err != nil {
		return syscall.EINVAL, d
	}
	return 0, d
}

// TestRemoteHTTPFaults mounts a consolidated store over HTTP with
// --store-timeout 1s and makes the server misbehave: each read of an
// uncached array fails with EIO within the timeout + 1 s or succeeds after
// retries, while stat, ls, df and cached arrays keep answering.
func TestRemoteHTTPFaults(t *testing.T) {
	needFuse(t)
	rs := remoteData(t)
	url, srv := serveHTTP(t, rs.root)
	const timeout = time.Second
	m := mountStore(t, url+"/v3cons", "--store-timeout", timeout.String(), "--store-retries", "3")
	arrays := rs.v3
	var next atomic.Int32
	// uncached returns the next array no test has read yet.
	uncached := func() mountArray {
		for {
			a := arrays[int(next.Add(1))%len(arrays)]
			if a.File == "data" && a.Unsupported == "" && !strings.Contains(a.Path, "empty") {
				if fi, err := os.Stat(a.Ref); err == nil && fi.Size() > 0 {
					return a
				}
			}
		}
	}
	cached := uncached()
	checkData(t, m.dir, []mountArray{cached})

	stillAnswers := func(t *testing.T, what string) {
		t.Helper()
		start := time.Now()
		if _, err := os.Stat(filepath.Join(m.dir, cached.Path, "data")); err != nil {
			t.Errorf("%s: stat: %v", what, err)
		}
		if _, err := os.ReadDir(m.dir); err != nil {
			t.Errorf("%s: ls: %v", what, err)
		}
		if _, stderr, err := runTool("df", m.dir); err != nil {
			t.Errorf("%s: df: %v %s", what, err, stderr)
		}
		if _, stderr, err := runTool("cmp", filepath.Join(m.dir, cached.Path, "data"), cached.Ref); err != nil {
			t.Errorf("%s: the cached array: %v %s", what, err, stderr)
		}
		if d := time.Since(start); d > timeout {
			t.Errorf("%s: stat, ls, df and a cached read took %v", what, d)
		}
	}
	wantEIOWithin := func(t *testing.T, what string) {
		t.Helper()
		a := uncached()
		errno, d := readErrno(filepath.Join(m.dir, a.Path, "data"))
		if errno != syscall.EIO {
			t.Errorf("%s: reading %s: errno %v (%d); want EIO", what, a.Path, errno, errno)
		}
		if d > timeout+time.Second {
			t.Errorf("%s: reading %s failed after %v; want within %v", what, a.Path, d, timeout+time.Second)
		}
	}
	wantOK := func(t *testing.T, what string) {
		t.Helper()
		a := uncached()
		if _, stderr, err := runTool("cmp", filepath.Join(m.dir, a.Path, "data"), a.Ref); err != nil {
			t.Errorf("%s: cmp %s: %v %s", what, a.Path, err, stderr)
		}
	}

	t.Run("hang", func(t *testing.T) {
		srv.SetFault(func(*nethttp.Request, int64) remotetest.Action { return remotetest.Action{Hang: true} })
		defer srv.SetFault(nil)
		wantEIOWithin(t, "a server that never answers")
		stillAnswers(t, "a server that never answers")
	})
	t.Run("cut", func(t *testing.T) {
		srv.SetFault(func(*nethttp.Request, int64) remotetest.Action { return remotetest.Action{CutAfter: 1} })
		defer srv.SetFault(nil)
		wantEIOWithin(t, "a server dropping every connection mid-body")
		stillAnswers(t, "a server dropping every connection mid-body")
	})
	t.Run("503", func(t *testing.T) {
		srv.SetFault(func(*nethttp.Request, int64) remotetest.Action { return remotetest.Action{Status: 503} })
		defer srv.SetFault(nil)
		wantEIOWithin(t, "always 503")
		stillAnswers(t, "always 503")
	})
	t.Run("503-then-ok", func(t *testing.T) {
		var seen = map[string]int{}
		var mu = make(chan struct{}, 1)
		srv.SetFault(func(r *nethttp.Request, _ int64) remotetest.Action {
			mu <- struct{}{}
			defer func() { <-mu }()
			k := r.URL.Path + r.Header.Get("Range")
			seen[k]++
			if seen[k] <= 2 {
				return remotetest.Action{Status: 503}
			}
			return remotetest.Action{}
		})
		defer srv.SetFault(nil)
		wantOK(t, "503 twice per request, then success")
	})
	t.Run("slow", func(t *testing.T) {
		srv.SetFault(func(*nethttp.Request, int64) remotetest.Action {
			return remotetest.Action{Delay: 300 * time.Millisecond}
		})
		defer srv.SetFault(nil)
		wantOK(t, "answers after 300ms")
	})
	t.Run("recovered", func(t *testing.T) {
		// Failures are not cached: the arrays that failed read now.
		next.Store(0)
		checkData(t, m.dir, []mountArray{uncached(), uncached()})
	})
}

// TestRemoteS3ServerStopped mounts a bucket, reads one array, then stops
// versitygw: reads of other arrays fail with EIO within --store-timeout +
// 1 s, the read array and the listing keep answering, and after a restart
// everything reads again.
func TestRemoteS3ServerStopped(t *testing.T) {
	needFuse(t)
	rs := remoteData(t)
	srv := startS3(t)
	srv.MakeBucket("stop")
	upload(t, srv, filepath.Join(rs.root, "v3"), "stop", "v3.zarr")
	const timeout = time.Second
	m := mountStore(t, "s3://stop/v3.zarr", "--store-timeout", timeout.String())
	find := run(t, "find", m.dir) // loads every node
	cached := rs.v3Sharded
	checkData(t, m.dir, []mountArray{cached})
	srv.Stop()
	var other mountArray
	for _, a := range rs.v3 {
		if fi, err := os.Stat(a.Ref); err == nil && fi.Size() > 0 && a.Path != cached.Path && a.File == "data" {
			other = a
			break
		}
	}
	errno, d := readErrno(filepath.Join(m.dir, other.Path, "data"))
	if errno != syscall.EIO || d > timeout+time.Second {
		t.Errorf("reading %s with the server stopped: errno %v after %v; want EIO within %v", other.Path, errno, d, timeout+time.Second)
	}
	// Each step is timed, so that a slow run says which step waited.
	start := time.Now()
	if got := run(t, "find", m.dir); string(got) != string(find) {
		t.Errorf("find with the server stopped differs")
	}
	tFind := time.Since(start)
	checkData(t, m.dir, []mountArray{cached})
	tRead := time.Since(start) - tFind
	if _, stderr, err := runTool("df", m.dir); err != nil {
		t.Errorf("df: %v %s", err, stderr)
	}
	d = time.Since(start)
	t.Logf("with the server stopped: find %v, a cached read %v, df %v", tFind, tRead, d-tFind-tRead)
	if d > timeout {
		t.Errorf("find, a cached read and df with the server stopped took %v (find %v, read %v, df %v)\n%s",
			d, tFind, tRead, d-tFind-tRead, m.stderr.String())
	}
	srv.Restart()
	checkData(t, m.dir, []mountArray{other})
}
