package icechunk

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/icechunk/icechunktest"
)

// TestTree lists and reads the whole-repository store: the top level,
// branches/, tags/, snapshots/, a snapshot's tree under each, the root
// document's summary, and a branch to a missing snapshot that fails alone.
func TestTree(t *testing.T) {
	ctx := context.Background()
	for _, spec := range []int{1, 2} {
		tr, r := openTestRepo(t, spec, false)
		tree := r.Tree()
		list := func(d string) []string {
			t.Helper()
			_, p, err := tree.ListDir(ctx, d)
			if err != nil {
				t.Fatalf("spec %d: ListDir(%q): %v", spec, d, err)
			}
			return p
		}
		if got := list(""); !slices.Equal(got, []string{"branches", "snapshots", "tags"}) {
			t.Errorf("top: %q", got)
		}
		if got := list("branches"); !slices.Equal(got, []string{"dev", "main"}) {
			t.Errorf("branches: %q", got)
		}
		if got := list("tags"); !slices.Equal(got, []string{"v1", "v2"}) {
			t.Errorf("tags: %q", got)
		}
		if got := list("snapshots"); len(got) != 6 || !slices.Contains(got, ID(tr.Snaps["s4"]).String()) {
			t.Errorf("snapshots: %q", got)
		}
		if got := list("tags/v2"); !slices.Equal(got, []string{"group1", "group2"}) {
			t.Errorf("tags/v2: %q", got)
		}
		if got := list("snapshots/" + ID(tr.Snaps["init"]).String()); len(got) != 0 {
			t.Errorf("initial snapshot: %q", got)
		}
		root, err := tree.Get(ctx, "zarr.json")
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []string{`"main": "` + ID(tr.Snaps["s3"]).String() + `"`, `"v1": "` + ID(tr.Snaps["s4"]).String(), `"snapshots": 6`} {
			if !strings.Contains(string(root), want) {
				t.Errorf("spec %d: root document lacks %q:\n%s", spec, want, root)
			}
		}
		sum := tree.Summary()
		for _, want := range []string{"spec version " + string(rune('0'+spec)), "branches:\n  dev   " + ID(tr.Snaps["s5"]).String() + "  2026-03-01 17:00:00 UTC  more structure\n",
			"  main  " + ID(tr.Snaps["s3"]).String() + "  2026-03-01 15:00:00 UTC  set virtual chunk\n", "tags:\n  v1  " + ID(tr.Snaps["s4"]).String(),
			"latest snapshots (6 in all):\n  " + ID(tr.Snaps["s5"]).String(), "Repository initialized\n"} {
			if !strings.Contains(sum, want) {
				t.Errorf("spec %d: summary lacks %q:\n%s", spec, want, sum)
			}
		}
		for _, key := range []string{"branches/zarr.json", "branches/dev/group2/inner/zarr.json", "snapshots/" + ID(tr.Snaps["init"]).String() + "/zarr.json"} {
			if _, err := tree.Get(ctx, key); err != nil {
				t.Errorf("%s: %v", key, err)
			}
		}
		for _, key := range []string{"branches/nope/zarr.json", "tags/main/zarr.json", "other/zarr.json",
			"snapshots/" + strings.ToLower(ID(tr.Snaps["s1"]).String()) + "/zarr.json", "branches/main/group2/zarr.json"} {
			if _, err := tree.Get(ctx, key); !errors.Is(err, store.ErrNotExist) {
				t.Errorf("%s: %v, want not found", key, err)
			}
		}
		keys, err := tree.ListPrefix(ctx, "tags/v1/")
		if err != nil || !slices.Equal(keys, []string{"tags/v1/group1/big/zarr.json", "tags/v1/group1/small/zarr.json", "tags/v1/group1/zarr.json", "tags/v1/zarr.json"}) {
			t.Errorf("ListPrefix(tags/v1/): %q, %v", keys, err)
		}

		// A branch to a snapshot that is not there.
		if spec == 1 {
			os.MkdirAll(filepath.Join(tr.Dir, "refs", "branch.broken"), 0o755)
			os.WriteFile(filepath.Join(tr.Dir, "refs", "branch.broken", "ref.json"), []byte(`{"snapshot":"AAAAAAAAAAAAAAAAAAA0"}`), 0o644)
			icechunktest.WriteLoop(t, tr.Dir)
			st, _ := dir.Open(tr.Dir, dir.Options{ReadOnly: true})
			r2, err := Open(ctx, st, Options{})
			if err != nil {
				t.Fatal(err)
			}
			t2 := r2.Tree()
			if _, err := t2.Get(ctx, "branches/broken/zarr.json"); err == nil || errors.Is(err, store.ErrNotExist) {
				t.Errorf("broken branch: %v, want an error that is not 'not found'", err)
			}
			if _, _, err := t2.ListDir(ctx, "branches/broken"); err == nil {
				t.Error("broken branch lists")
			}
			if _, err := t2.Get(ctx, "branches/loop/zarr.json"); err != nil {
				t.Errorf("loop: %v", err)
			}
			if _, err := t2.Get(ctx, "branches/main/group1/zarr.json"); err != nil {
				t.Errorf("sibling of a broken branch: %v", err)
			}
		}
	}
}

// TestInfoTags: a chunk or document that two snapshots reference alike
// has the same ETag in both (GetIfChanged: not modified), one referenced
// differently does not; through the Tree too, as a --live mount asks
// after a branch moved.
func TestInfoTags(t *testing.T) {
	ctx := context.Background()
	tr, r := openTestRepo(t, 2, false)
	s3, _ := r.Ref(ctx, "main")
	s5, _ := r.Ref(ctx, "dev")
	for _, tc := range []struct {
		key  string
		same bool
	}{
		{"group1/big/c/0/1", true}, {"group1/big/c/0/0", true}, {"group1/small/c/0", true},
		{"group1/zarr.json", true}, {"zarr.json", true}, {"group1/small/c/4", false},
	} {
		_, info, err := s3.GetRangeInfo(ctx, tc.key, store.All)
		if err != nil {
			t.Fatalf("%s: %v", tc.key, err)
		}
		if info.ETag == "" || !info.ModTime.Equal(s3.file.FlushedAt) {
			t.Errorf("%s: info %+v", tc.key, info)
		}
		_, _, err = s5.GetIfChanged(ctx, tc.key, info)
		if got := errors.Is(err, store.ErrNotModified); got != tc.same {
			t.Errorf("%s: main → dev: %v, want not modified %v", tc.key, err, tc.same)
		}
		_, _, err = r.Tree().GetIfChanged(ctx, "branches/dev/"+tc.key, info)
		if got := errors.Is(err, store.ErrNotModified); got != tc.same {
			t.Errorf("branches/dev/%s: %v, want not modified %v", tc.key, err, tc.same)
		}
	}
	// big's chunk (0,0): native in s2, virtual in s3.
	s2, err := r.Snapshot(ctx, ID(tr.Snaps["s2"]))
	if err != nil {
		t.Fatal(err)
	}
	_, info, _ := s2.GetRangeInfo(ctx, "group1/big/c/0/0", store.All)
	if _, _, err := s3.GetIfChanged(ctx, "group1/big/c/0/0", info); err != nil {
		t.Errorf("native → virtual: %v, want the new bytes", err)
	}
}
