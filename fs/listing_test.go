package fs

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/zarr"
)

// TestMountFindAsksOnlyReaddirplus runs find(1) over a mount of a v2
// hierarchy (2 groups of 3 arrays), printing every entry's size, and
// checks what the kernel asked the daemon for: READDIRPLUS, two per
// directory (its entries with their attributes, then the empty reply that
// ends it), and no LOOKUP or GETATTR of any entry, since the attributes
// READDIRPLUS answered with hold for the life of a mount of a store that
// does not change. The sizes find printed are those of the files the daemon
// serves.
func TestMountFindAsksOnlyReaddirplus(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse: FUSE is unavailable here")
	}
	find, err := exec.LookPath("find")
	if err != nil {
		t.Skip("no find(1)")
	}
	ctx := context.Background()
	st, err := dir.Open(t.TempDir(), dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := zarr.CreateGroup(ctx, st, "", zarr.GroupMeta{Format: zarr.FormatV2}); err != nil {
		t.Fatal(err)
	}
	for g := range 2 {
		if err := zarr.CreateGroup(ctx, st, fmt.Sprintf("g%d", g), zarr.GroupMeta{Format: zarr.FormatV2}); err != nil {
			t.Fatal(err)
		}
		for a := range 3 {
			if _, err := zarr.CreateArray(ctx, st, fmt.Sprintf("g%d/a%d", g, a), zarr.ArrayMeta{Format: zarr.FormatV2,
				Shape: []int64{4, 6}, ChunkShape: []int64{2, 3}, DataType: "<f4", FillValue: 0}); err != nil {
				t.Fatal(err)
			}
		}
	}
	h, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var debug peertest.Buffer
	mnt := t.TempDir()
	srv, err := Mount(mnt, h, Config{FsName: "find", Debug: true, Logger: log.New(&debug, "", 0)})
	if err != nil {
		t.Skipf("cannot mount FUSE here: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	before := len(debug.String())

	out, err := exec.Command(find, mnt, "-printf", "%y %s %P\n").Output()
	if err != nil {
		t.Fatalf("find: %v", err)
	}
	asked := debug.String()[before:]
	dirs := 0
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		kind, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		size, rel, _ := strings.Cut(rest, " ")
		if kind == "d" {
			dirs++
			continue
		}
		fi, err := os.Stat(filepath.Join(mnt, rel))
		if err != nil || strconv.FormatInt(fi.Size(), 10) != size {
			t.Errorf("find printed %s bytes for %s; stat: %v, %v", size, rel, fi, err)
		}
	}
	if dirs != 1+2+2*3 {
		t.Errorf("find printed %d directories, want %d:\n%s", dirs, 1+2+2*3, out)
	}
	ops := map[string]int{}
	for _, m := range regexp.MustCompile(`rx \d+: ([A-Z_]+)`).FindAllStringSubmatch(asked, -1) {
		ops[m[1]]++
	}
	// Besides: the root's attributes, and what find asks once (OPENDIR,
	// answered ENOSYS, STATFS …).
	if ops["READDIRPLUS"] != 2*dirs || ops["LOOKUP"] != 0 || ops["GETATTR"] > 1 {
		t.Errorf("find asked the daemon %v; want %d READDIRPLUS (two per directory), no LOOKUP, no GETATTR but the root's", ops, 2*dirs)
	}
}
