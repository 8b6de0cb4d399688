//go:build linux

package fs

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/zarr"
)

// TestMountFindAsksOnlyReaddirplus runs find(1) over fresh mounts of a v2
// hierarchy (2 groups of 3 arrays) and checks what the kernel asked the
// daemon for. Printing names, find costs READDIRPLUS alone, two per
// directory (its entries, then the empty reply that ends them): the
// directories' entries carry their attributes, which hold for the life of
// a mount of a store that does not change, and files' entries none, so no
// LOOKUP or GETATTR follows. Printing every entry's size, find looks up
// the files of the first directory it lists (the root's two), and from
// then on the listings carry files' attributes too. The sizes find printed
// are those of the files the daemon serves.
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
	// Long enough that a loaded machine's find stays in one window.
	window := statWindow
	statWindow = time.Minute
	t.Cleanup(func() { statWindow = window })
	var listed [2][]string
	for i, tc := range []struct {
		name    string
		printf  string
		lookups int
	}{
		{"names", "%y - %P\n", 0},
		{"sizes", "%y %s %P\n", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			listed[i] = findAsks(t, st, find, tc.printf, tc.lookups)
		})
	}
	if !slices.Equal(listed[0], listed[1]) || len(listed[0]) < 1+2+2*3+6*6 {
		t.Errorf("find listed, without files' attributes:\n%q\nwith them:\n%q", listed[0], listed[1])
	}
}

// findAsks mounts st, runs find with printf over it and checks the
// requests it caused: two READDIRPLUS per directory, lookups LOOKUP, no
// GETATTR but the root's. Where printf prints sizes, they are checked
// against stat(2). It returns the kinds and paths find printed.
func findAsks(t *testing.T, st *dir.Store, find, printf string, lookups int) []string {
	h, err := zarr.Open(context.Background(), st, zarr.Options{})
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

	out, err := exec.Command(find, mnt, "-printf", printf).Output()
	if err != nil {
		t.Fatalf("find: %v", err)
	}
	asked := debug.String()[before:]
	dirs := 0
	var names []string
	sizes := map[string]string{} // find's sizes of files, by path
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		kind, rest, _ := strings.Cut(strings.TrimSpace(line), " ")
		size, rel, _ := strings.Cut(rest, " ")
		names = append(names, kind+" "+rel)
		if kind == "d" {
			dirs++
			continue
		}
		if size != "-" {
			sizes[rel] = size
		}
	}
	// stat(1), in its own process, reports the sizes find printed.
	if len(sizes) > 0 {
		args := []string{"-c", "%s %n"}
		for rel := range sizes {
			args = append(args, filepath.Join(mnt, rel))
		}
		out, err := exec.Command("stat", args...).Output()
		if err != nil {
			t.Fatalf("stat: %v", err)
		}
		for line := range strings.Lines(strings.TrimSpace(string(out))) {
			size, path, _ := strings.Cut(strings.TrimSpace(line), " ")
			rel, _ := filepath.Rel(mnt, path)
			if sizes[rel] != size {
				t.Errorf("find printed %s bytes for %s; stat(1): %s", sizes[rel], rel, size)
			}
			delete(sizes, rel)
		}
		if len(sizes) > 0 {
			t.Errorf("stat(1) reported nothing for %v", sizes)
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
	if ops["READDIRPLUS"] != 2*dirs || ops["LOOKUP"] != lookups || ops["GETATTR"] > 1 {
		t.Errorf("find asked the daemon %v; want %d READDIRPLUS (two per directory), %d LOOKUP, no GETATTR but the root's", ops, 2*dirs, lookups)
	}
	return names
}
