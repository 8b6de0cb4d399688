package diskcache

import (
	"context"
	"errors"
	"hash/fnv"
	"os"
	"path/filepath"
	"time"
)

// lockName is the file, in a cache's Sub folder, whose bytes are the
// entries' locks.
const lockName = "locks"

// lockFile is an entry's lock: while one process fetches or writes a value,
// others wanting the same entry wait for it (and then read what it wrote)
// rather than fetch it too. It is an open-file-description lock
// (fcntl F_OFD_SETLK) on one byte of the folder's lock file, at an offset
// hashed from the entry's name: no file is made or removed per entry, and
// the kernel releases the lock when its holder dies (kill -9 included).
// Each lock opens the file anew, so that two locks in one process are two
// owners and exclude each other as two processes' do.
type lockFile struct{ f *os.File }

// lockOffset is the byte of the lock file that locks the entry at path.
func lockOffset(path string) int64 {
	h := fnv.New64a()
	h.Write([]byte(filepath.Base(path)))
	return int64(h.Sum64() >> 2) // < 2^62: Start + Len cannot overflow
}

// lock takes the lock of the entry at path in the folder root, waiting
// until ctx is done; block false tries once and returns errBusy when
// another holds it.
func lock(ctx context.Context, root, path string, block bool) (*lockFile, error) {
	name := filepath.Join(root, lockName)
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if errors.Is(err, os.ErrNotExist) { // the folder was cleared under us
		if err = os.MkdirAll(root, 0o755); err == nil {
			spreadDirs(root)
			f, err = os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
		}
	}
	if err != nil {
		return nil, err
	}
	off := lockOffset(path)
	wait := time.Millisecond
	for {
		err := tryLock(f, off)
		if err == nil {
			return &lockFile{f: f}, nil
		}
		if !errors.Is(err, errBusy) {
			f.Close()
			return nil, err
		}
		if !block {
			f.Close()
			return nil, errBusy
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(wait*2, 20*time.Millisecond)
	}
}

// unlock releases the lock (closing its description does).
func (l *lockFile) unlock() { l.f.Close() }

// errBusy is lock's answer when another holds the lock and block is false.
var errBusy = errors.New("diskcache: entry locked")
