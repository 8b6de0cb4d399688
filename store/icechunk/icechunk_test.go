package icechunk

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/icechunk/icechunktest"
)

// openTestRepo writes a test repository and opens it, with file://
// virtual references read from the local disk.
func openTestRepo(t *testing.T, spec int, compressed bool) (*icechunktest.Repo, *Repo) {
	t.Helper()
	tr := icechunktest.Write(t, spec, compressed)
	st, err := dir.Open(tr.Dir, dir.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	r, err := Open(ctx, st, Options{AllowFile: true, OpenURL: openFileURL})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return tr, r
}

// openFileURL opens file:///DIR as a directory store.
func openFileURL(_ context.Context, base string, _ *Container) (store.Store, error) {
	p, ok := strings.CutPrefix(base, "file://")
	if !ok {
		return nil, fmt.Errorf("test opens only file:// URLs, not %s", base)
	}
	return dir.Open(p, dir.Options{ReadOnly: true})
}

// chunkValues decodes a chunk as the test writer encodes it.
func chunkValues(t *testing.T, b []byte, itemsize int) []float64 {
	t.Helper()
	raw := unzstd(t, b)
	out := make([]float64, len(raw)/itemsize)
	for i := range out {
		switch itemsize {
		case 1:
			out[i] = float64(int8(raw[i]))
		case 2:
			out[i] = float64(int16(binary.LittleEndian.Uint16(raw[2*i:])))
		case 4:
			out[i] = float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:])))
		}
	}
	return out
}

// TestSnapshotStore reads every chunk of every array of every snapshot of
// repositories of spec 1 and 2 (with plain and dictionary-compressed
// virtual locations) written by the test writer, through references by
// branch, tag and snapshot id, and compares them with the formulas the
// writer wrote.
func TestSnapshotStore(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		spec       int
		compressed bool
	}{{1, false}, {2, false}, {2, true}} {
		t.Run(fmt.Sprintf("spec%d-compressed=%v", tc.spec, tc.compressed), func(t *testing.T) {
			tr, r := openTestRepo(t, tc.spec, tc.compressed)
			if r.Spec() != tc.spec {
				t.Errorf("spec %d", r.Spec())
			}
			if got := r.Branches(); len(got) != 2 || got["main"] != ID(tr.Snaps["s3"]) || got["dev"] != ID(tr.Snaps["s5"]) {
				t.Errorf("branches %v", got)
			}
			if got := r.Tags(); len(got) != 2 || got["v1"] != ID(tr.Snaps["s4"]) || got["v2"] != ID(tr.Snaps["s5"]) {
				t.Errorf("tags %v (gone must not appear)", got)
			}
			snaps, err := r.Snapshots(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var msgs []string
			for _, s := range snaps {
				msgs = append(msgs, s.Message)
			}
			want := []string{"more structure", "delete a chunk", "set virtual chunk", "fill data", "empty structure", "Repository initialized"}
			if !slices.Equal(msgs, want) {
				t.Errorf("snapshots %q, want %q", msgs, want)
			}
			refs := map[string]string{"main": "s3", "dev": "s5", "v1": "s4", "v2": "s5"}
			for name, id := range tr.Snaps {
				refs[ID(id).String()] = name
				refs[strings.ToLower(ID(id).String())] = name
			}
			for ref, name := range refs {
				s, err := r.Ref(ctx, ref)
				if err != nil {
					t.Fatalf("%s: %v", ref, err)
				}
				if s.ID() != ID(tr.Snaps[name]) {
					t.Fatalf("%s: snapshot %s, want %s", ref, s.ID(), ID(tr.Snaps[name]))
				}
				checkSnapshot(t, s, name)
			}
			if _, err := r.Ref(ctx, "nope"); !errors.Is(err, ErrNoRef) {
				t.Errorf("unknown ref: %v", err)
			}
		})
	}
}

// checkSnapshot compares every chunk of snapshot s (named name in
// writeTestRepo) with the formulas.
func checkSnapshot(t *testing.T, s *Snapshot, name string) {
	t.Helper()
	ctx := context.Background()
	arrays := []struct {
		path        string
		grid, chunk [2]int
		itemsize    int
		key         func(i, j int) string
	}{
		{"group1/big", [2]int{2, 2}, [2]int{5, 5}, 4, func(i, j int) string { return fmt.Sprintf("c/%d/%d", i, j) }},
		{"group1/small", [2]int{5, 1}, [2]int{1, 1}, 1, func(i, _ int) string { return fmt.Sprintf("c/%d", i) }},
		{"group2/inner", [2]int{3, 2}, [2]int{2, 2}, 2, func(i, j int) string { return fmt.Sprintf("%d.%d", i, j) }},
	}
	for _, a := range arrays {
		want := icechunktest.Expected(name, a.path)
		_, err := s.Get(ctx, a.path+"/zarr.json")
		if want == nil {
			if !errors.Is(err, store.ErrNotExist) {
				t.Errorf("%s %s/zarr.json: %v, want not found", name, a.path, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s %s/zarr.json: %v", name, a.path, err)
		}
		shape := map[string][2]int{"group1/big": {10, 10}, "group1/small": {5, 1}, "group2/inner": {5, 4}}[a.path]
		for ci := range a.grid[0] {
			for cj := range a.grid[1] {
				key := a.path + "/" + a.key(ci, cj)
				b, err := s.Get(ctx, key)
				// The chunk's expected elements, within the array.
				var exp []float64
				allFill := true
				for x := range a.chunk[0] {
					for y := range a.chunk[1] {
						i, j := ci*a.chunk[0]+x, cj*a.chunk[1]+y
						if i >= shape[0] || j >= shape[1] {
							exp = append(exp, math.Inf(1)) // past the edge: any value
							continue
						}
						v := want[i*shape[1]+j]
						exp = append(exp, v)
						if !(math.IsNaN(v) || (a.path == "group1/small" && v == 8)) {
							allFill = false
						}
					}
				}
				if allFill {
					if !errors.Is(err, store.ErrNotExist) {
						t.Errorf("%s %s: %v, want not found (fill value)", name, key, err)
					}
					continue
				}
				if err != nil {
					t.Fatalf("%s %s: %v", name, key, err)
				}
				got := chunkValues(t, b, a.itemsize)
				for k, v := range exp {
					if !math.IsInf(v, 1) && got[k] != v {
						t.Fatalf("%s %s[%d] = %v, want %v", name, key, k, got[k], v)
					}
				}
			}
		}
	}
}

// TestCacheAndCancel: with a manifest cache too small for one manifest
// every chunk still reads (the newest stays, the rest are evicted); a
// read cancelled while opening a snapshot or a manifest is not
// remembered as that snapshot's or manifest's error.
func TestCacheAndCancel(t *testing.T) {
	tr := icechunktest.Write(t, 2, false)
	st, _ := dir.Open(tr.Dir, dir.Options{ReadOnly: true})
	ctx := context.Background()
	r, err := Open(ctx, st, Options{ManifestCache: 1, AllowFile: true, OpenURL: openFileURL})
	if err != nil {
		t.Fatal(err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Ref(cctx, "dev"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled open: %v", err)
	}
	s, err := r.Ref(ctx, "dev")
	if err != nil {
		t.Fatalf("open after a cancelled one: %v", err)
	}
	if _, err := s.Get(cctx, "group2/inner/0.0"); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled chunk read: %v", err)
	}
	for range 2 {
		checkSnapshot(t, s, "s5")
	}
	if n, _ := r.mans.stats(); n != 1 {
		t.Errorf("%d manifests cached with a 1-byte bound", n)
	}
}

// TestSnapshotCacheBound: parsed snapshots are kept within their bound
// (the newest always stays), every snapshot still reads after its
// eviction, and the bytes counted go back down as entries go.
func TestSnapshotCacheBound(t *testing.T) {
	tr := icechunktest.Write(t, 2, false)
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		limit   int
		wantAll bool
	}{{"one byte", 1, false}, {"default", 0, true}} {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := dir.Open(tr.Dir, dir.Options{ReadOnly: true})
			r, err := Open(ctx, st, Options{SnapshotCache: tc.limit, AllowFile: true, OpenURL: openFileURL})
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			snaps, err := r.Snapshots(ctx)
			if err != nil || len(snaps) < 3 {
				t.Fatalf("%d snapshots, %v", len(snaps), err)
			}
			for range 2 {
				for _, si := range snaps {
					if _, err := r.Snapshot(ctx, si.ID); err != nil {
						t.Fatalf("snapshot %s: %v", si.ID, err)
					}
				}
			}
			checkSnapshot(t, mustRef(t, r, "dev"), "s5")
			n, bytes := r.snaps.stats()
			switch {
			case tc.wantAll && n != len(snaps):
				t.Errorf("%d of %d snapshots cached under the default bound", n, len(snaps))
			case !tc.wantAll && n != 1:
				t.Errorf("%d snapshots cached with a 1-byte bound", n)
			case bytes <= 0 || (!tc.wantAll && bytes > 1<<20):
				t.Errorf("%d bytes counted for %d snapshots", bytes, n)
			}
		})
	}
}

func mustRef(t *testing.T, r *Repo, ref string) *Snapshot {
	t.Helper()
	s, err := r.Ref(context.Background(), ref)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestIDs: ids in Crockford base 32 as the spec's example writes them,
// and read back in the forms Crockford allows.
func TestIDs(t *testing.T) {
	id := ID{0x0b, 0x1c, 0xc8, 0xd6, 0x78, 0x75, 0x80, 0xf0, 0xe3, 0x3a, 0x65, 0x34}
	if got := id.String(); got != "1CECHNKREP0F1RSTCMT0" {
		t.Errorf("%x = %s, want the spec's 1CECHNKREP0F1RSTCMT0", id[:], got)
	}
	for _, s := range []string{"1CECHNKREP0F1RSTCMT0", "1cechnkrep0f1rstcmt0", "lCECHNKREPOF1RSTCMT0", "ICECHNKREP0F1RSTCMTo"} {
		if got, err := ParseID(s); err != nil || got != id {
			t.Errorf("ParseID(%q) = %x, %v", s, got[:], err)
		}
	}
	for _, s := range []string{"", "1CECHNKREP0F1RSTCMT", "1CECHNKREP0F1RSTCMTU", "1CECHNKREP0F1RSTCMT00"} {
		if _, err := ParseID(s); err == nil {
			t.Errorf("ParseID(%q) accepted", s)
		}
	}
}
