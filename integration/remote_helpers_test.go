package integration

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/remote/remotetest"
	"github.com/zarrfs/zarrfs/store/s3"
	"github.com/zarrfs/zarrfs/store/s3/s3test"
)

// remoteStores are the peers' stores the remote tests serve, built once
// per test binary under tmpRoot/remote:
//
//	v2        zarr-python's v2 arrays (writeV2), copied
//	v2cons    the same, consolidated by zarr-python (zarr.consolidate_metadata)
//	v3        zarrita's v3 arrays (write_v3.mjs) and a sharded array (write_sharded.mjs)
//	v3cons    the same with inline consolidated metadata in the root zarr.json
//	          (zarrita cannot write it: built here from the node documents)
//	v3.zip    v3 zipped (Stored members)
type remoteStores struct {
	root      string
	v2, v3    []mountArray
	v2vlen    map[string]bool
	v3Sharded mountArray
	// the sharded array's shape, shard shape and inner chunk shape
	shardedShape, shardedShards, shardedChunks [2]int
	ok                                         bool
}

var remoteFixture struct {
	once sync.Once
	s    remoteStores
}

// remoteData builds the stores (once) and returns them.
func remoteData(t *testing.T) *remoteStores {
	t.Helper()
	peertest.NeedPython(t)
	peertest.NeedNode(t)
	remoteFixture.once.Do(func() {
		start := time.Now()
		defer func() { t.Logf("remote stores built in %v", time.Since(start).Round(time.Millisecond)) }()
		s := &remoteFixture.s
		s.root = filepath.Join(tmpRoot, "remote")
		// v2: a snapshot of zarr-python's store (other tests add to it).
		v2src, cases := writeV2(t)
		v2 := filepath.Join(s.root, "v2")
		copyTree(t, v2src, v2)
		s.v2vlen = map[string]bool{}
		for _, c := range cases {
			a := mountArray{Path: c.Path, Ref: c.Ref, File: "data", DType: littleEndian(c.DType), Shape: c.Shape, Unsupported: v2Compressors[c.Compressor]}
			if c.DType == "O" {
				a.File = "data.txt"
				s.v2vlen[c.Path] = true
			}
			s.v2 = append(s.v2, a)
		}
		if _, err := os.Stat(filepath.Join(v2, "broken")); err == nil {
			os.RemoveAll(filepath.Join(v2, "broken")) // TestMountPythonV2's additions
		}
		copyTree(t, v2, filepath.Join(s.root, "v2cons"))
		peertest.RunPython(t, "import sys, zarr\nzarr.consolidate_metadata(zarr.DirectoryStore(sys.argv[1]))\n", filepath.Join(s.root, "v2cons"))

		// v3: zarrita's arrays plus a sharded one.
		v3src, arrays := v3MountArrays(t)
		v3 := filepath.Join(s.root, "v3")
		copyTree(t, v3src, v3)
		s.v3 = slices.Clone(arrays)
		s.shardedShape, s.shardedShards, s.shardedChunks = [2]int{120, 100}, [2]int{40, 50}, [2]int{8, 10}
		peertest.Oracle(t, "js/write_sharded.mjs", v3, "sharded",
			fmt.Sprint(s.shardedShape[0]), fmt.Sprint(s.shardedShape[1]),
			fmt.Sprint(s.shardedShards[0]), fmt.Sprint(s.shardedShards[1]),
			fmt.Sprint(s.shardedChunks[0]), fmt.Sprint(s.shardedChunks[1]))
		ref := filepath.Join(s.root, "sharded.bin")
		if err := os.WriteFile(ref, peertest.Oracle(t, "js/read.mjs", v3, "sharded"), 0o644); err != nil {
			t.Fatal(err)
		}
		s.v3Sharded = mountArray{Path: "sharded", Ref: ref, File: "data", DType: "<f4", Shape: s.shardedShape[:]}
		s.v3 = append(s.v3, s.v3Sharded)
		copyTree(t, v3, filepath.Join(s.root, "v3cons"))
		consolidateV3(t, filepath.Join(s.root, "v3cons"))
		zipTree(t, v3, filepath.Join(s.root, "v3.zip"))
		s.ok = true
	})
	if !remoteFixture.s.ok {
		t.Fatal("building the remote stores failed in an earlier test")
	}
	return &remoteFixture.s
}

// copyTree copies the files under src to dst.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// consolidateV3 adds inline consolidated metadata (as zarr-python 3
// writes it) to the root zarr.json of the v3 hierarchy in dir.
func consolidateV3(t *testing.T, dir string) {
	t.Helper()
	meta := map[string]json.RawMessage{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != "zarr.json" || p == filepath.Join(dir, "zarr.json") {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, filepath.Dir(p))
		meta[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	rootPath := filepath.Join(dir, "zarr.json")
	b, err := os.ReadFile(rootPath)
	if err != nil {
		t.Fatal(err)
	}
	var root map[string]any
	if err := json.Unmarshal(b, &root); err != nil {
		t.Fatal(err)
	}
	root["consolidated_metadata"] = map[string]any{"kind": "inline", "must_understand": false, "metadata": meta}
	out, err := json.MarshalIndent(root, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rootPath, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// zipTree writes the files under dir into a zip archive at its root.
func zipTree(t *testing.T, dir, dst string) {
	t.Helper()
	f, err := os.Create(dst)
	if err != nil {
		t.Fatal(err)
	}
	w := zip.NewWriter(f)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		hw, err := w.CreateHeader(&zip.FileHeader{Name: filepath.ToSlash(rel), Method: zip.Store})
		if err != nil {
			return err
		}
		src, err := os.Open(p)
		if err != nil {
			return err
		}
		defer src.Close()
		_, err = io.Copy(hw, src)
		return err
	})
	if err == nil {
		err = w.Close()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
}

// serveHTTP serves dir over HTTP (with Range support, request counts and
// faults) until the test ends, and returns its URL and server.
func serveHTTP(t *testing.T, dir string) (string, *remotetest.Server) {
	t.Helper()
	srv := &remotetest.Server{Dir: dir}
	ts := httptest.NewServer(srv)
	t.Cleanup(func() {
		srv.Release()
		ts.Close()
	})
	return ts.URL, srv
}

// startS3 starts versitygw and points zarrfs subprocesses at it through
// the AWS_* environment variables.
func startS3(t testing.TB) *s3test.Server {
	t.Helper()
	srv := s3test.Start(t)
	for _, kv := range srv.Env() {
		k, v, _ := strings.Cut(kv, "=")
		t.Setenv(k, v)
	}
	return srv
}

// upload copies the files under dir into bucket/prefix with PutObject.
func upload(t *testing.T, srv *s3test.Server, dir, bucket, prefix string) {
	t.Helper()
	st, err := s3.New(bucket, prefix, s3.Options{Endpoint: srv.Endpoint, AccessKey: s3test.AccessKey, SecretKey: s3test.SecretKey})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	start, files := time.Now(), 0
	defer func() {
		t.Logf("uploaded %d files to s3://%s/%s in %v", files, bucket, prefix, time.Since(start).Round(time.Millisecond))
	}()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(16)
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files++
		g.Go(func() error {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return st.Set(gctx, filepath.ToSlash(rel), b)
		})
		return nil
	})
	if werr := g.Wait(); err == nil {
		err = werr
	}
	if err != nil {
		t.Fatalf("upload %s to s3://%s/%s: %v", dir, bucket, prefix, err)
	}
}

// readMountData compares every array's data file in the mount with the
// peer's bytes, reading through the kernel in this process (faster than a
// cmp per array; checkData does that for the local mounts): unsupported
// arrays must fail with EOPNOTSUPP, and st_size must match.
func readMountData(t *testing.T, mnt string, arrays []mountArray) {
	t.Helper()
	g := new(errgroup.Group)
	g.SetLimit(4)
	var mu sync.Mutex
	errorf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		t.Errorf(format, args...)
	}
	for _, a := range arrays {
		g.Go(func() error {
			p := filepath.Join(mnt, a.Path, a.File)
			got, err := os.ReadFile(p)
			if a.Unsupported != "" {
				if !errors.Is(err, syscall.EOPNOTSUPP) {
					errorf("%s: %v; want EOPNOTSUPP (%s)", p, err, a.Unsupported)
				}
				return nil
			}
			if err != nil {
				errorf("%s: %v", p, err)
				return nil
			}
			want, err := os.ReadFile(a.Ref)
			if err != nil {
				return err
			}
			if !bytes.Equal(got, want) {
				errorf("%s: %d bytes differ from the peer's %d", p, len(got), len(want))
			}
			if fi, err := os.Stat(p); err != nil || (a.File == "data" && fi.Size() != int64(len(want))) {
				errorf("stat %s: %v, %v; want size %d", p, fi, err, len(want))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		t.Fatal(err)
	}
}

// mountUnlistable mounts a store whose root cannot be listed (so
// mountStore's wait for a listing would never end): it waits until MNT is
// a mount point. The mount is undone when the test ends.
func mountUnlistable(t *testing.T, spec string) string {
	t.Helper()
	needFuse(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(zarrfsBin, "mount", spec, mnt)
	var stderr peertest.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
		unmount(mnt)
	})
	for deadline := time.Now().Add(20 * time.Second); !isMountpoint(mnt); {
		select {
		case <-exited:
			t.Fatalf("zarrfs mount %s exited: %s", spec, stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("zarrfs mount %s: not mounted after 20 s: %s", spec, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	return mnt
}
