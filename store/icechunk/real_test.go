package icechunk

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/icechunk/icechunktest"
)

// TestIcechunkProjectRepos reads the Icechunk project's own committed test
// repositories (icechunk-python/tests/data/test-repo-v1, -v2 and
// -v2-migrated, written by its tests/test_can_read_old.py; copied into
// testdata/project, see projectRepos), and checks what that script wrote and its reader asserts: the histories of
// main, my-branch and the tags, the deleted tag gone, and the values
// (big_chunks 42.0 where materialized, small_chunks [84 84 84 84 fill]).
func TestIcechunkProjectRepos(t *testing.T) {
	root := projectRepos()
	ctx := context.Background()
	for _, name := range []string{"test-repo-v1", "test-repo-v2", "test-repo-v2-migrated"} {
		t.Run(name, func(t *testing.T) {
			st, err := dir.Open(filepath.Join(root, name), dir.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			r, err := Open(ctx, st, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("spec %d, branches %v, tags %v", r.Spec(), r.Branches(), r.Tags())
			if _, ok := r.Tags()["deleted"]; ok {
				t.Error("deleted tag listed")
			}
			mainHist := []string{"set virtual chunk", "fill data", "empty structure", "Repository initialized"}
			branchHist := append([]string{"some more structure", "delete a chunk"}, mainHist...)
			for ref, want := range map[string][]string{"main": mainHist, "my-branch": branchHist,
				"it also works!": branchHist, "it works!": branchHist[1:]} {
				if got := ancestry(t, r, ref); !slices.Equal(got, want) {
					t.Errorf("%s: history %q, want %q", ref, got, want)
				}
			}
			s, err := r.Ref(ctx, "my-branch")
			if err != nil {
				t.Fatal(err)
			}
			_, kids, _ := s.ListDir(ctx, "")
			if !slices.Equal(kids, []string{"group1", "group2"}) {
				t.Errorf("root lists %q", kids)
			}
			for i := range 5 {
				b, err := s.Get(ctx, "group1/small_chunks/c/"+string(rune('0'+i)))
				if i == 4 {
					if !errors.Is(err, store.ErrNotExist) {
						t.Errorf("deleted chunk 4: %v", err)
					}
					continue
				}
				if err != nil {
					t.Fatal(err)
				}
				if d := unzstd(t, b); len(d) != 1 || int8(d[0]) != 84 {
					t.Errorf("small_chunks chunk %d = %v", i, d)
				}
			}
			for _, k := range []string{"c/0/1", "c/1/0", "c/1/1"} {
				b, err := s.Get(ctx, "group1/big_chunks/"+k)
				if err != nil {
					t.Fatal(err)
				}
				d := unzstd(t, b)
				for j := 0; j < len(d); j += 4 {
					if v := math.Float32frombits(binary.LittleEndian.Uint32(d[j:])); v != 42 {
						t.Fatalf("big_chunks %s[%d] = %v", k, j/4, v)
					}
				}
			}
			// c/0/0 is virtual, at s3://testbucket/can_read_old/chunk-1,
			// which only the project's MinIO holds.
			if _, err := s.Get(ctx, "group1/big_chunks/c/0/0"); !errors.Is(err, ErrRefused) {
				t.Errorf("virtual chunk without OpenURL: %v", err)
			}
			if b, err := s.Get(ctx, "group2/group3/group4/group5/inner/zarr.json"); err != nil || len(b) == 0 {
				t.Errorf("inner zarr.json: %v", err)
			}
		})
	}
}

// TestIcechunkProjectContainers reads the virtual chunk containers of the
// Icechunk project's test repositories (projectRepos, as
// above): test-repo-v1's config.yaml and test-repo-v2-migrated's
// FlexBuffers config, which Icechunk's migration wrote from that YAML,
// give the same containers; test-repo-v2's FlexBuffers (Icechunk 2's
// serde) gives its one s3://testbucket/ container.
func TestIcechunkProjectContainers(t *testing.T) {
	root := projectRepos()
	containers := map[string][]Container{}
	for _, name := range []string{"test-repo-v1", "test-repo-v2", "test-repo-v2-migrated"} {
		st, err := dir.Open(filepath.Join(root, name), dir.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		r, err := Open(context.Background(), st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		if err := r.current().containersErr; err != nil {
			t.Errorf("%s: %v", name, err)
		}
		containers[name] = r.Containers()
		r.Close()
	}
	testbucket := Container{Store: "s3_compatible", Region: "us-east-1", Endpoint: "http://localhost:4200",
		AllowHTTP: true, ForcePathStyle: true}
	v1 := containers["test-repo-v1"]
	if len(v1) != 5 || v1[0] != (Container{Name: "s3", Prefix: "s3://testbucket", Store: testbucket.Store, Region: testbucket.Region,
		Endpoint: testbucket.Endpoint, AllowHTTP: true, ForcePathStyle: true}) {
		t.Errorf("test-repo-v1: %+v", v1)
	}
	if !slices.Equal(v1, containers["test-repo-v2-migrated"]) {
		t.Errorf("test-repo-v2-migrated: %+v, want test-repo-v1's %+v", containers["test-repo-v2-migrated"], v1)
	}
	testbucket.Name, testbucket.Prefix = "s3://testbucket/", "s3://testbucket/"
	if v2 := containers["test-repo-v2"]; len(v2) != 1 || v2[0] != testbucket {
		t.Errorf("test-repo-v2: %+v, want %+v", v2, testbucket)
	}
}

// ancestry lists the messages from ref back to the first snapshot.
func ancestry(t *testing.T, r *Repo, ref string) []string {
	t.Helper()
	ctx := context.Background()
	id, err := r.Resolve(ctx, ref)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for range 100 {
		m, parent, err := r.parentOf(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, m)
		if parent == nil {
			return out
		}
		id = *parent
	}
	t.Fatal("ancestry too long")
	return nil
}

func unzstd(t *testing.T, b []byte) []byte {
	t.Helper()
	d, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	out, err := d.DecodeAll(b, nil)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestWriterMatchesProject compares the files of the test writer with
// those of the Icechunk project's committed repositories of the same spec
// version (projectRepos): the header's layout
// (file type, compression, padding of the implementation name) and which
// fields each FlatBuffer's root table, snapshot nodes, array data,
// manifest arrays and chunk references carry.
func TestWriterMatchesProject(t *testing.T) {
	root := projectRepos()
	for _, spec := range []int{1, 2} {
		tr := icechunktest.Write(t, spec, false)
		real := filepath.Join(root, map[int]string{1: "test-repo-v1", 2: "test-repo-v2"}[spec])
		mine := shapes(t, tr.Dir)
		theirs := shapes(t, real)
		// What the data differ in: the writer's chunks at non-zero
		// offsets and arrays with dimension names; the project's repo
		// config (FlexBuffers, which a reader does not need).
		extra := map[string][]int{"ChunkRef native": {2}, "ChunkRef virtual": {2}, "ArrayNodeData": {1}}
		missing := map[string][]int{"Repo": {9}}
		for kind, want := range theirs {
			got := mine[kind]
			for _, f := range want {
				if !slices.Contains(got, f) && !slices.Contains(missing[kind], f) {
					t.Errorf("spec %d %s: the project writes field %d, the writer does not (writer %v, project %v)", spec, kind, f, got, want)
				}
			}
			for _, f := range got {
				if !slices.Contains(want, f) && !slices.Contains(extra[kind], f) {
					t.Errorf("spec %d %s: the writer writes field %d, the project does not (writer %v, project %v)", spec, kind, f, got, want)
				}
			}
		}
		t.Logf("spec %d: %d kinds of table compared: %v", spec, len(theirs), theirs)
	}
}

// shapes returns, for each kind of table in the repository at dir, the
// union of the field ids present in its files, and the header bytes.
func shapes(t *testing.T, dir string) map[string][]int {
	t.Helper()
	out := map[string]map[int]bool{}
	add := func(kind string, tb table, n int) {
		if out[kind] == nil {
			out[kind] = map[int]bool{}
		}
		for i := range n {
			if tb.has(i) {
				out[kind][i] = true
			}
		}
	}
	for _, sub := range []string{"snapshots", "manifests", "repo"} {
		files, _ := filepath.Glob(filepath.Join(dir, sub, "*"))
		if sub == "repo" {
			files = []string{filepath.Join(dir, "repo")}
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			h, buf, err := payload(data, map[string]int{"snapshots": TypeSnapshot, "manifests": TypeManifest, "repo": TypeRepoInfo}[sub])
			if err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if string(data[12:36]) != fmt.Sprintf("%-24s", h.Implementation) {
				t.Errorf("%s: implementation name not space-padded: %q", f, data[12:36])
			}
			add(sub+" header compression", table{}, 0)
			out[sub+" header compression"][h.Compression] = true
			rt := rootTable(buf)
			switch sub {
			case "snapshots":
				add("Snapshot", rt, 9)
				for _, n := range rt.tables(2) {
					add("NodeSnapshot", n, 6)
					if n.uint8(3, 0) == 1 {
						a, _ := n.sub(4)
						add("ArrayNodeData", a, 4)
						for _, m := range a.tables(2) {
							add("ManifestRef", m, 2)
						}
					}
				}
			case "manifests":
				add("Manifest", rt, 5)
				for _, a := range rt.tables(1) {
					add("ArrayManifest", a, 3)
					for _, c := range a.tables(1) {
						kind := "ChunkRef native"
						switch {
						case c.has(1):
							kind = "ChunkRef inline"
						case c.has(5) || c.has(8):
							kind = "ChunkRef virtual"
						}
						add(kind, c, 10)
					}
				}
			case "repo":
				add("Repo", rt, 13)
				for _, s := range rt.tables(4) {
					add("SnapshotInfo", s, 6)
				}
			}
		}
	}
	res := map[string][]int{}
	for k, m := range out {
		for i := range m {
			res[k] = append(res[k], i)
		}
		slices.Sort(res[k])
	}
	return res
}

// projectRepos returns the folder of the Icechunk project's committed
// test repositories: testdata/project (see its SOURCE), or the copy
// ZARRFS_ICECHUNK_TESTDATA names (the project's icechunk-python/tests/data
// at another commit).
func projectRepos() string {
	if root := os.Getenv("ZARRFS_ICECHUNK_TESTDATA"); root != "" {
		return root
	}
	return filepath.Join("testdata", "project")
}
