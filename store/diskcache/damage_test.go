package diskcache

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// entryFiles returns the entry files under dir.
func entryFiles(t *testing.T, dir string) []string {
	t.Helper()
	files, _ := walk(filepath.Join(dir, Sub), false)
	var out []string
	for _, f := range files {
		out = append(out, f.path)
	}
	return out
}

// TestDamagedEntries: a cache file truncated, with a byte flipped, emptied
// or replaced by another entry's is never served: it is read again.
func TestDamagedEntries(t *testing.T) {
	damage := map[string]func(b []byte, other []byte) []byte{
		"truncated":  func(b, _ []byte) []byte { return b[:len(b)-100] },
		"flipped":    func(b, _ []byte) []byte { b = bytes.Clone(b); b[len(b)/2] ^= 0x10; return b },
		"header bit": func(b, _ []byte) []byte { b = bytes.Clone(b); b[20] ^= 1; return b },
		"empty":      func(b, _ []byte) []byte { return nil },
		"head only":  func(b, _ []byte) []byte { return b[:headSize] },
		"swapped":    func(_, o []byte) []byte { return o },
		"grown":      func(b, _ []byte) []byte { return append(bytes.Clone(b), 0) },
	}
	for name, dmg := range damage {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			f := newFar(2)
			_, s := open(t, dir, f, Options{})
			readAll(t, s, f, 2)
			c0 := filepath.Join(filepath.Dir(f.pathOf(dir, "a/c/0")), filepath.Base(f.pathOf(dir, "a/c/0")))
			b, err := os.ReadFile(c0)
			if err != nil {
				t.Fatal(err)
			}
			other, _ := os.ReadFile(f.pathOf(dir, "a/c/1"))
			if err := os.WriteFile(c0, dmg(b, other), 0o644); err != nil {
				t.Fatal(err)
			}
			f.reqs.Store(0)
			c2, s2 := open(t, dir, f, Options{})
			got, err := s2.Get(context.Background(), "a/c/0")
			if err != nil || !bytes.Equal(got, f.m["a/c/0"]) {
				t.Fatalf("Get after damage: %d bytes, %v", len(got), err)
			}
			if f.reqs.Load() != 1 || c2.Stats().Corrupt != 1 {
				t.Errorf("damaged entry: %d requests, stats %+v; want it read again (1) and counted corrupt", f.reqs.Load(), c2.Stats())
			}
			if b2, _ := os.ReadFile(c0); !bytes.Equal(b2, b) {
				t.Errorf("the damaged entry was not written again")
			}
		})
	}
}

// pathOf is the entry file of key's whole value in the folder dir.
func (f *far) pathOf(dir, key string) string {
	c := &Cache{root: filepath.Join(dir, Sub)}
	return c.path("far://x", key, "a")
}

// TestWriteFailureFallsBack: writes failing (ENOSPC-like: the limit of
// the folder reached by a file in the way) never fail a read.
func TestWriteFailureFallsBack(t *testing.T) {
	dir := t.TempDir()
	f := newFar(3)
	var logs []string
	c, s := open(t, dir, f, Options{Logf: func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }})
	// A file where the entry's folder must be makes every write fail.
	p := f.pathOf(dir, "a/c/0")
	os.RemoveAll(filepath.Dir(p))
	os.WriteFile(filepath.Dir(p), []byte("in the way"), 0o644)
	readAll(t, s, f, 3)
	if !c.noWrite.Load() || len(logs) != 1 {
		t.Errorf("writes failing: noWrite %v, logs %q; want writing off, one line", c.noWrite.Load(), logs)
	}
}

// TestKilledWriter: a process killed mid-write leaves a temporary file,
// which a scan leaves alone while the writer lives and the next open
// removes once it is dead; the entry is then fetched.
func TestKilledWriter(t *testing.T) {
	if dir := os.Getenv("DISKCACHE_KILL_DIR"); dir != "" {
		f := newFar(1)
		p := f.pathOf(dir, "a/c/0")
		os.MkdirAll(filepath.Dir(p), 0o755)
		l, err := lock(context.Background(), filepath.Join(dir, Sub), p, true)
		if err != nil {
			os.Exit(3)
		}
		tmp, _ := os.CreateTemp(filepath.Dir(p), filepath.Base(p)+".tmp*")
		tmp.Write([]byte(magic + "half an entry"))
		os.WriteFile(filepath.Join(dir, "ready"), nil, 0o644)
		time.Sleep(time.Minute)
		l.unlock()
		return
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), "DISKCACHE_KILL_DIR="+dir)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for start := time.Now(); ; time.Sleep(5 * time.Millisecond) {
		if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
			break
		}
		if time.Since(start) > 20*time.Second {
			cmd.Process.Kill()
			t.Fatal("the child never got to write")
		}
	}
	f := newFar(1)
	sub := filepath.Dir(f.pathOf(dir, "a/c/0"))
	// While it lives, a scan leaves its files alone.
	walk(filepath.Join(dir, Sub), true)
	if n, _ := os.ReadDir(sub); len(n) != 1 {
		t.Fatalf("a live writer's files: %d; want 1 (its temporary file)", len(n))
	}
	cmd.Process.Signal(syscall.SIGKILL)
	cmd.Wait()
	_, s := open(t, dir, f, Options{})
	if n, _ := os.ReadDir(sub); len(n) != 0 {
		var names []string
		for _, e := range n {
			names = append(names, e.Name())
		}
		t.Errorf("after the writer's death and an open: %q left; want nothing", names)
	}
	readAll(t, s, f, 1)
	if f.reqs.Load() != 2 {
		t.Errorf("%d requests; want 2 (the value, the missing key)", f.reqs.Load())
	}
}

// TestLive: with Live every whole value is revalidated (304: from disk),
