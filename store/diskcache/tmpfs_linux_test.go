package diskcache

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
)

// TestReadOnlyFolder: a folder that cannot be written serves what it
// holds and reads the rest from the store, with one log line.
func TestReadOnlyFolder(t *testing.T) {
	dir := t.TempDir()
	if os.Geteuid() == 0 {
		// Root writes into folders without write permission: a
		// tmpfs remounted read-only is what refuses it.
		if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=1m"); err != nil {
			t.Skipf("root, and mount tmpfs: %v", err)
		}
		t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	}
	f := newFar(4)
	_, s := open(t, dir, f, Options{})
	readAll(t, s, f, 2)
	if os.Geteuid() == 0 {
		if err := syscall.Mount("tmpfs", dir, "tmpfs", syscall.MS_REMOUNT|syscall.MS_RDONLY, "size=1m"); err != nil {
			t.Fatalf("remount read-only: %v", err)
		}
	} else {
		filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
			if fi != nil && fi.IsDir() {
				os.Chmod(p, 0o555)
			}
			return nil
		})
		t.Cleanup(func() {
			filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
				if fi != nil && fi.IsDir() {
					os.Chmod(p, 0o755)
				}
				return nil
			})
		})
	}
	f.reqs.Store(0)
	var logs []string
	c, s2 := open(t, dir, f, Options{Logf: func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }})
	readAll(t, s2, f, 4)
	if f.reqs.Load() != 4 {
		t.Errorf("read-only folder: %d requests; want 4 (the two values not cached before, and their ranges: nothing is written)", f.reqs.Load())
	}
	if len(logs) != 1 || !strings.Contains(logs[0], "cannot write") {
		t.Errorf("logs: %q; want one line saying the folder cannot be written", logs)
	}
	if st := c.Stats(); st.Hits < 4 {
		t.Errorf("stats %+v: want the cached values served", st)
	}
}

// TestFullDisk: a cache folder on a tmpfs too small for the values reads
// them all right, turning writing off with one log line. It needs root
// (mount).
func TestFullDisk(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("mounting a small tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size=64k"); err != nil {
		t.Skipf("mount tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
	f := newFar(200)
	var mu sync.Mutex
	var logs []string
	c, s := open(t, dir, f, Options{MaxSize: 1 << 30, Logf: func(format string, args ...any) {
		mu.Lock()
		logs = append(logs, fmt.Sprintf(format, args...))
		mu.Unlock()
	}})
	// The bound from free space (half of 64 KiB) would evict before the
	// tmpfs fills: lift it, so that writes meet ENOSPC.
	c.limit.Store(1 << 40)
	c.evicting.Store(true)
	readAll(t, s, f, 200)
	readAll(t, s, f, 200)
	if !c.noWrite.Load() || len(logs) != 1 || !strings.Contains(logs[0], "no space") {
		t.Errorf("full tmpfs: noWrite %v, logs %q; want writing off, one line saying why", c.noWrite.Load(), logs)
	}
	if st := c.Stats(); st.Hits == 0 {
		t.Errorf("stats %+v: want what was written before the tmpfs filled served", st)
	}
}
