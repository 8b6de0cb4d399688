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
