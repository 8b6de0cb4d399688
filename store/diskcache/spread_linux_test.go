package diskcache

import (
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestSpreadDirs: on ext2/3/4 a new cache's folder carries the Orlov
// "top directory" flag (spreadDirs), so that its entry folders land in
// block groups of their own; elsewhere it is skipped.
func TestSpreadDirs(t *testing.T) {
	dir := t.TempDir()
	var st unix.Statfs_t
	if err := unix.Statfs(dir, &st); err != nil || st.Type != unix.EXT4_SUPER_MAGIC {
		t.Skipf("%s is not on ext2/3/4 (statfs type %#x, %v): the flag does not apply", dir, st.Type, err)
	}
	c, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	<-c.scanned
	check := func(when string) {
		t.Helper()
		f, err := os.Open(filepath.Join(dir, Sub))
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
		if err != nil {
			t.Skipf("FS_IOC_GETFLAGS: %v", err)
		}
		if flags&fsTopDir == 0 {
			t.Errorf("%s: flags %#x of the cache folder; want FS_TOPDIR_FL (%#x)", when, flags, fsTopDir)
		}
	}
	check("after Open")
	// Cleared under a running cache: the folder made again has it too.
	if err := Clear(dir); err != nil {
		t.Fatal(err)
	}
	s := c.Wrap(newFar(1), "far://x")
	if _, err := s.Get(t.Context(), "a/c/0"); err != nil {
		t.Fatal(err)
	}
	check("after Clear and a read")
}
