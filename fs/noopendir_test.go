//go:build linux

package fs

import (
	"context"
	"fmt"
	"log"
	"os"
	"regexp"
	"slices"
	"sync"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/zarr"
)

// getdents lists the directory at path with getdents64(2) in a buffer of
// bufSize bytes, so that the kernel asks for the listing in pieces: each
// READDIRPLUS after the first starts at an offset, on a handle of its own.
func getdents(t *testing.T, path string, bufSize int) []string {
	t.Helper()
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var out []string
	buf := make([]byte, bufSize)
	for {
		n, err := unix.Getdents(fd, buf)
		if err != nil {
			t.Fatalf("getdents %s: %v", path, err)
		}
		if n == 0 {
			return out
		}
		_, _, out = unix.ParseDirent(buf[:n], -1, out)
	}
}

// TestMountNoOpendir lists a group of 300 children, whose listing the
// kernel reads in many pieces, through a mount that answers OPENDIR with
// ENOSYS (FUSE_NO_OPENDIR_SUPPORT): every child once, in order, whatever
// the buffer; again from the kernel's cache; by 4 listers at once; and no
// OPENDIR after the first.
func TestMountNoOpendir(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse: FUSE is unavailable here")
	}
	ctx := context.Background()
	path := t.TempDir()
	st, err := dir.Open(path, dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if err := zarr.CreateGroup(ctx, st, "", zarr.GroupMeta{Format: zarr.FormatV3}); err != nil {
		t.Fatal(err)
	}
	var want []string
	for i := range 300 {
		name := fmt.Sprintf("group-with-a-longish-name-%03d", i)
		if err := zarr.CreateGroup(ctx, st, name, zarr.GroupMeta{Format: zarr.FormatV3}); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	want = append(want, "info.txt", "zarr.json")
	slices.Sort(want)
	h, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var debug peertest.Buffer
	mnt := t.TempDir()
	srv, err := Mount(mnt, h, Config{FsName: "big", Debug: true, Logger: log.New(&debug, "", 0)})
	if err != nil {
		t.Skipf("cannot mount FUSE here: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})

	for _, size := range []int{512, 4096, 1 << 16} {
		if got := getdents(t, mnt, size); !slices.Equal(sorted(got), want) || len(got) != len(want) {
			t.Errorf("buffer %d: listed %d names, want %d", size, len(got), len(want))
		}
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if got := names(t, mnt); !slices.Equal(got, want) {
				t.Errorf("concurrent listing: %d names, want %d", len(got), len(want))
			}
		})
	}
	wg.Wait()
	// Each group's own listing: its zarr.json and info.txt.
	for _, name := range want[:5] {
		if name == "info.txt" || name == "zarr.json" {
			continue
		}
		if got := getdents(t, mnt+"/"+name, 512); !slices.Equal(sorted(got), []string{"info.txt", "zarr.json"}) {
			t.Errorf("%s lists %v", name, got)
		}
	}

	log := debug.String()
	if n := len(regexp.MustCompile(`rx \d+: OPENDIR`).FindAllString(log, -1)); n > 1 {
		t.Errorf("%d OPENDIR requests, want at most the first", n)
	}
	if !regexp.MustCompile(`NO_OPENDIR_SUPPORT`).MatchString(log) {
		t.Log("the kernel does not offer FUSE_NO_OPENDIR_SUPPORT: directories were opened")
	}
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}
