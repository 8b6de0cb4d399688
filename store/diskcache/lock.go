package diskcache

import (
	"context"
	"errors"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// lockFile is an entry's lock: while one process fetches a value, others
// wanting the same entry wait for it (and then read what it wrote) rather
// than fetch it too. It is flock(2) on PATH.lock, which the kernel releases
// when its holder dies (kill -9 included). The holder removes the lock file
// before it unlocks, and a waiter that got the lock checks that the file it
// locked is still the one at the path (else it locked a removed file and
// tries again), so lock files exist only while someone holds them.
type lockFile struct {
	f    *os.File
	path string
}

// lock takes the lock at path, waiting until ctx is done; block false
// tries once and returns errBusy when another holds it.
func lock(ctx context.Context, path string, block bool) (*lockFile, error) {
	wait := time.Millisecond
	for {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		for {
			err = unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
			if err == nil {
				break
			}
			if !errors.Is(err, unix.EWOULDBLOCK) || !block {
				f.Close()
				if errors.Is(err, unix.EWOULDBLOCK) {
					return nil, errBusy
				}
				return nil, err
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
		var held, now unix.Stat_t
		if unix.Fstat(int(f.Fd()), &held) == nil && unix.Stat(path, &now) == nil &&
			held.Dev == now.Dev && held.Ino == now.Ino {
			return &lockFile{f: f, path: path}, nil
		}
		f.Close() // its holder removed it: lock the new one
	}
}

// unlock removes the lock file and releases the lock.
func (l *lockFile) unlock() {
	os.Remove(l.path)
	l.f.Close()
}
