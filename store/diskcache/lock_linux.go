package diskcache

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// tryLock takes the write lock of byte off of f once: an open-file-
// description lock (fcntl F_OFD_SETLK), owned by f's description and so
// released by the kernel when it is closed or its process dies. It
// returns errBusy when another description holds the byte.
func tryLock(f *os.File, off int64) error {
	lk := unix.Flock_t{Type: unix.F_WRLCK, Whence: 0, Start: off, Len: 1}
	err := unix.FcntlFlock(f.Fd(), unix.F_OFD_SETLK, &lk)
	if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EACCES) {
		return errBusy
	}
	return err
}

// freeSpace is the space that an unprivileged writer may still use on the
// file system holding dir, in bytes.
func freeSpace(dir string) (int64, bool) {
	var st unix.Statfs_t
	if unix.Statfs(dir, &st) != nil {
		return 0, false
	}
	return int64(st.Bavail) * int64(st.Bsize), true
}

// fsTopDir is FS_TOPDIR_FL (linux/fs.h), which golang.org/x/sys lacks.
const fsTopDir = 0x00020000

// spreadDirs marks the folder root as the top of a hierarchy for ext2/3/4's
// Orlov allocator (chattr +T), so that the entry folders made in it are
// placed in block groups of their own rather than in the group of root's
// parent. It matters on an ext4 without a journal, which, making a file,
// reads every inode of the group deleted in the last minutes and skips
// it: under a busy /tmp (every go build makes and removes thousands of
// files there) that made creating entries a large share of a cold read
// (BENCH.md, The disk cache). Other file systems refuse the flag, which
// changes nothing.
func spreadDirs(root string) {
	f, err := os.Open(root)
	if err != nil {
		return
	}
	defer f.Close()
	flags, err := unix.IoctlGetUint32(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil || flags&fsTopDir != 0 {
		return
	}
	unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, int(flags|fsTopDir))
}
