package integration

import (
	"bytes"
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
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store/icechunk/icechunktest"
)

// expectedBytes is icechunktest.Expected as the bytes of data: itemsize
// bytes per element, little-endian.
func expectedBytes(snap, array string, itemsize int) []byte {
	var b bytes.Buffer
	for _, v := range icechunktest.Expected(snap, array) {
		switch itemsize {
		case 1:
			b.WriteByte(byte(int8(v)))
		case 2:
			binary.Write(&b, binary.LittleEndian, int16(v))
		case 4:
			binary.Write(&b, binary.LittleEndian, math.Float32bits(float32(v)))
		}
	}
	return b.Bytes()
}

// TestIcechunkMount mounts Icechunk repositories of spec 1 and 2 and reads
// them through the kernel: the top level shows branches/, tags/,
// snapshots/ and an info.txt naming the references and snapshots with
// their messages; every branch, tag and snapshot is a full tree whose
// arrays' data equal the formulas the test writer used. A branch to a
// missing snapshot fails alone.
func TestIcechunkMount(t *testing.T) {
	needFuse(t)
	for _, spec := range []int{1, 2} {
		tr := icechunktest.Write(t, spec, spec == 2)
		if spec == 1 {
			os.MkdirAll(filepath.Join(tr.Dir, "refs", "branch.broken"), 0o755)
			os.WriteFile(filepath.Join(tr.Dir, "refs", "branch.broken", "ref.json"), []byte(`{"snapshot":"AAAAAAAAAAAAAAAAAAA0"}`), 0o644)
		}
		m := mountStore(t, tr.Dir)
		if got := lsNames(t, m.dir); !slices.Equal(got, []string{"branches", "info.txt", "snapshots", "tags", "zarr.json"}) {
			t.Errorf("spec %d: top level lists %q", spec, got)
		}
		info := string(run(t, "cat", filepath.Join(m.dir, "info.txt")))
		for _, want := range []string{"set virtual chunk", "more structure", "Repository initialized", tr.Snaps["s4"].String()} {
			if !strings.Contains(info, want) {
				t.Errorf("spec %d: info.txt lacks %q:\n%s", spec, want, info)
			}
		}
		wantBranches := []string{"dev", "info.txt", "main", "zarr.json"}
		if spec == 1 {
			wantBranches = []string{"broken", "dev", "info.txt", "main", "zarr.json"}
		}
		if got := lsNames(t, filepath.Join(m.dir, "branches")); !slices.Equal(got, wantBranches) {
			t.Errorf("spec %d: branches/ lists %q", spec, got)
		}
		dirs := map[string]string{"branches/main": "s3", "branches/dev": "s5", "tags/v1": "s4", "tags/v2": "s5"}
		for name, id := range tr.Snaps {
			dirs["snapshots/"+id.String()] = name
		}
		for d, snap := range dirs {
			for _, a := range []struct {
				path     string
				itemsize int
			}{{"group1/big", 4}, {"group1/small", 1}, {"group2/inner", 2}} {
				p := filepath.Join(m.dir, d, a.path, "data")
				want := expectedBytes(snap, a.path, a.itemsize)
				if icechunktest.Expected(snap, a.path) == nil {
					if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
						t.Errorf("spec %d: %s: %v, want absent", spec, p, err)
					}
					continue
				}
				sameBytes(t, d+"/"+a.path, run(t, "cat", p), want)
			}
		}
		if spec == 1 {
			if _, err := os.ReadDir(filepath.Join(m.dir, "branches", "broken")); err == nil {
				t.Error("a branch to a missing snapshot lists")
			}
		}
	}
	// mount --ref mounts one reference's tree.
	tr := icechunktest.Write(t, 2, false)
	m := mountStore(t, tr.Dir, "--ref", "v2")
	if got := lsNames(t, m.dir); !slices.Equal(got, []string{"group1", "group2", "info.txt", "zarr.json"}) {
		t.Errorf("mount --ref v2 lists %q", got)
	}
	sameBytes(t, "--ref v2 group2/inner", run(t, "cat", filepath.Join(m.dir, "group2", "inner", "data")), expectedBytes("s5", "group2/inner", 2))
}

// TestIcechunkLive mounts repositories of spec 1 and 2 with --live 1s,
// moves branch main to the snapshot of branch dev (spec 1: its ref.json;
// spec 2: the repo info file), and waits until branches/main/ shows
// dev's tree.
func TestIcechunkLive(t *testing.T) {
	needFuse(t)
	for _, spec := range []int{1, 2} {
		t.Run(fmt.Sprint("spec", spec), func(t *testing.T) { testIcechunkLive(t, spec) })
	}
}

func testIcechunkLive(t *testing.T, spec int) {
	tr := icechunktest.Write(t, spec, false)
	m := mountStore(t, tr.Dir, "--live", "1s")
	inner := filepath.Join(m.dir, "branches", "main", "group2", "inner", "data")
	if _, err := os.Stat(inner); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("main before the move: %v", err)
	}
	for _, a := range []string{"small", "big"} {
		run(t, "cat", filepath.Join(m.dir, "branches", "main", "group1", a, "data"))
	}
	tr.SetBranch("main", "s5")
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		if _, err := os.Stat(inner); err == nil {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("branches/main does not follow the branch 30 s after it moved: %v\n%s", err, m.stderr.String())
		}
	}
	sameBytes(t, "branches/main/group2/inner after the move", run(t, "cat", inner), expectedBytes("s5", "group2/inner", 2))
	// Chunks the new snapshot references as the old one did are taken
	// over (GetIfChanged); those it does not (small's deleted chunk 4)
	// are read again.
	sameBytes(t, "branches/main/group1/small after the move", run(t, "cat", filepath.Join(m.dir, "branches", "main", "group1", "small", "data")),
		expectedBytes("s5", "group1/small", 1))
	sameBytes(t, "branches/main/group1/big after the move", run(t, "cat", filepath.Join(m.dir, "branches", "main", "group1", "big", "data")),
		expectedBytes("s5", "group1/big", 4))
}

// TestIcechunkRemote reads a spec 2 repository from an S3 bucket
// (versitygw) and over HTTP: the arrays equal the writer's formulas, and
// the virtual chunk that points at a local file (file://) is refused, as
// a repository that is not on the local disk may not read the reader's
// files; the other chunks and arrays read.
func TestIcechunkRemote(t *testing.T) {
	tr := icechunktest.Write(t, 2, true)
	srv := startS3(t)
	srv.MakeBucket("ice")
	upload(t, srv, tr.Dir, "ice", "repo/")
	web := httptest.NewServer(nethttp.FileServer(nethttp.Dir(tr.Dir)))
	defer web.Close()
	for _, store := range []string{"s3://ice/repo", web.URL} {
		for _, c := range []struct {
			ref, array string
			itemsize   int
		}{{"dev", "group2/inner", 2}, {"v1", "group1/small", 1}, {"main", "group1/small", 1}} {
			snap := map[string]string{"dev": "s5", "v1": "s4", "main": "s3"}[c.ref]
			sameBytes(t, store+" "+c.ref+" "+c.array, mustZarrfs(t, "cat", "--ref", c.ref, store, c.array), expectedBytes(snap, c.array, c.itemsize))
		}
		res := runZarrfs(t, "cat", "--ref", "main", store, "group1/big")
		if res.err == nil || !strings.Contains(string(res.stderr), "virtual chunk URL refused") {
			t.Errorf("%s: the file:// virtual chunk: %v: %s", store, res.err, res.stderr)
		}
		if got := string(mustZarrfs(t, "ls", store)); !strings.Contains(got, "group1/") {
			t.Errorf("%s: ls: %s", store, got)
		}
	}
}

// TestIcechunkServed: `zarrfs serve webdav` of a repository shows all of
// it, as the mount does (branches/, tags/, snapshots/ and the root's
// info.txt), and a branch is a tree.
func TestIcechunkServed(t *testing.T) {
	tr := icechunktest.Write(t, 2, false)
	s := startServe(t, "webdav", tr.Dir)
	get := func(path string) string {
		t.Helper()
		resp, err := nethttp.Get(s.url(t) + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != nethttp.StatusOK {
			t.Fatalf("GET %s: %v %s", path, err, resp.Status)
		}
		return string(b)
	}
	index := get("")
	for _, name := range []string{"branches/", "tags/", "snapshots/", "info.txt"} {
		if !strings.Contains(index, name) {
			t.Errorf("the served root does not list %s:\n%s", name, index)
		}
	}
	if info := get("info.txt"); !strings.Contains(info, "Repository initialized") {
		t.Errorf("the served root's info.txt lists no snapshots:\n%s", info)
	}
	if got := get("branches/main/"); !strings.Contains(got, "info.txt") {
		t.Errorf("branches/main/ is not a tree:\n%s", got)
	}
}
