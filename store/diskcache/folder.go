package diskcache

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// file is an entry file as a scan sees it.
type file struct {
	path  string
	size  int64
	mtime time.Time
}

// FolderStats describe a cache folder's content (zarrfs cache stats).
type FolderStats struct {
	Entries int
	Bytes   int64
	// Leftovers are temporary files whose writer is gone (removed by the
	// scan that counted them).
	Leftovers      int
	Oldest, Newest time.Time // modification times: last written or read
}

// walk lists the entry files of the folder root and, with clean, removes
// the temporary files of dead writers: a temporary file whose entry's lock
// nobody holds (every write holds it, and the kernel releases the lock of
// a process that dies). It returns how many it removed.
func walk(root string, clean bool) ([]file, int) {
	var files []file
	left := 0
	subs, _ := os.ReadDir(root)
	for _, s := range subs {
		if !s.IsDir() {
			continue
		}
		dir := filepath.Join(root, s.Name())
		names, _ := os.ReadDir(dir)
		for _, n := range names {
			name := n.Name()
			p := filepath.Join(dir, name)
			if base, _, ok := strings.Cut(name, ".tmp"); ok {
				if !clean {
					continue
				}
				l, err := lock(context.Background(), root, filepath.Join(dir, base), false)
				if err != nil {
					continue // a live process is writing it
				}
				if os.Remove(p) == nil {
					left++
				}
				l.unlock()
				continue
			}
			fi, err := n.Info()
			if err != nil || !fi.Mode().IsRegular() {
				continue
			}
			files = append(files, file{path: p, size: fi.Size(), mtime: fi.ModTime()})
		}
	}
	return files, left
}

// scan counts the folder's size, sets its bound from MaxSize and the file
// system's free space, and evicts the least recently used entries until
// it is within 90% of the bound when over it. first also removes what
// dead processes left.
func (c *Cache) scan(first bool) {
	files, _ := walk(c.root, first && !c.noWrite.Load())
	var used int64
	for _, f := range files {
		used += f.size
	}
	limit := c.opts.MaxSize
	if free, ok := freeSpace(c.root); ok {
		if share := (used + free) / 2; share < limit {
			limit = share
		}
	}
	c.limit.Store(limit)
	if used > limit && !c.noWrite.Load() {
		sort.Slice(files, func(i, j int) bool { return files[i].mtime.Before(files[j].mtime) })
		for _, f := range files {
			if used <= limit/10*9 {
				break
			}
			if os.Remove(f.path) == nil {
				used -= f.size
			}
		}
	}
	c.used.Store(used)
}

// Usage describes the cache folder dir (its Sub folder) and removes what
// dead processes left there.
func Usage(dir string) (FolderStats, error) {
	root := filepath.Join(dir, Sub)
	if _, err := os.Stat(root); err != nil {
		return FolderStats{}, err
	}
	files, left := walk(root, true)
	s := FolderStats{Entries: len(files), Leftovers: left}
	for _, f := range files {
		s.Bytes += f.size
		if s.Oldest.IsZero() || f.mtime.Before(s.Oldest) {
			s.Oldest = f.mtime
		}
		if f.mtime.After(s.Newest) {
			s.Newest = f.mtime
		}
	}
	return s, nil
}

// Clear removes every entry of the cache folder dir (its Sub folder).
// Processes using the folder meanwhile go on: they fetch again what they
// do not find.
func Clear(dir string) error {
	return os.RemoveAll(filepath.Join(dir, Sub))
}
