package diskcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/deadline"
	"github.com/zarrfs/zarrfs/store/fault"
	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/store/storetest"
)

// far is a fake far store: values with ETags, counting every request,
// slow when delay is set, failing when down is.
type far struct {
	mu    sync.Mutex
	m     map[string][]byte
	delay time.Duration
	down  atomic.Bool
	reqs  atomic.Int64 // requests that carried or would carry a body
	conds atomic.Int64 // conditional requests answered 304
}

func newFar(n int) *far {
	f := &far{m: map[string][]byte{}}
	for i := range n {
		f.m[fmt.Sprintf("a/c/%d", i)] = bytes.Repeat([]byte{byte(i), byte(i >> 8), 7}, 1000+i)
	}
	f.m["a/zarr.json"] = []byte(`{"zarr_format":3}`)
	return f
}

func (f *far) String() string { return "far" }

func (f *far) set(key string, v []byte) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.m[key] = v
}

func (f *far) value(ctx context.Context, key string) ([]byte, store.Info, error) {
	if err := store.CheckKey(ctx, key); err != nil {
		return nil, store.Info{}, err
	}
	if f.delay > 0 {
		time.Sleep(f.delay)
	}
	if f.down.Load() {
		return nil, store.Info{}, errors.New("far: connection refused")
	}
	f.mu.Lock()
	v, ok := f.m[key]
	f.mu.Unlock()
	if !ok {
		return nil, store.Info{}, fmt.Errorf("far: %q: %w", key, store.ErrNotExist)
	}
	return v, store.Info{Size: int64(len(v)), ETag: fmt.Sprintf(`"%08x"`, crc32.ChecksumIEEE(v))}, nil
}

func (f *far) Get(ctx context.Context, key string) ([]byte, error) {
	return f.GetRange(ctx, key, store.All)
}

func (f *far) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	b, _, err := f.GetRangeInfo(ctx, key, r)
	return b, err
}

func (f *far) GetRangeInfo(ctx context.Context, key string, r store.ByteRange) ([]byte, store.Info, error) {
	f.reqs.Add(1)
	v, info, err := f.value(ctx, key)
	if err != nil {
		return nil, info, err
	}
	s, e, err := r.Resolve(int64(len(v)))
	if err != nil {
		return nil, info, err
	}
	return bytes.Clone(v[s:e]), info, nil
}

func (f *far) GetIfChanged(ctx context.Context, key string, old store.Info) ([]byte, store.Info, error) {
	v, info, err := f.value(ctx, key)
	if err == nil && old.ETag == info.ETag {
		f.conds.Add(1)
		return nil, info, store.ErrNotModified
	}
	f.reqs.Add(1)
	return bytes.Clone(v), info, err
}

func (f *far) Stat(ctx context.Context, key string) (store.Info, error) {
	f.reqs.Add(1)
	_, info, err := f.value(ctx, key)
	return info, err
}

// open opens a cache on dir (waiting for its first scan) and wraps s.
func open(t *testing.T, dir string, s store.Store, opts Options) (*Cache, store.Store) {
	t.Helper()
	if opts.Logf == nil {
		opts.Logf = t.Logf
	}
	c, err := Open(dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	<-c.scanned
	return c, c.Wrap(s, "far://x")
}

// flush waits for s's cache's writes in the background (Close does).
func flush(s store.Store) { s.(io.Closer).Close() }

// readAll reads n values of f through s, whole, then (once written) a
// range of each, then a missing key; and waits for the writes.
func readAll(t *testing.T, s store.Store, f *far, n int) {
	t.Helper()
	ctx := context.Background()
	want := func(key string) []byte {
		f.mu.Lock()
		defer f.mu.Unlock()
		return f.m[key]
	}
	for i := range n {
		key := fmt.Sprintf("a/c/%d", i)
		if b, err := s.Get(ctx, key); err != nil || !bytes.Equal(b, want(key)) {
			t.Fatalf("Get(%q) = %d bytes, %v; want %d bytes", key, len(b), err, len(want(key)))
		}
	}
	flush(s)
	for i := range n {
		key := fmt.Sprintf("a/c/%d", i)
		r, err := s.GetRange(ctx, key, store.Range(10, 20))
		if err != nil || !bytes.Equal(r, want(key)[10:30]) {
			t.Fatalf("GetRange(%q, 10-29) = %v, %v", key, r, err)
		}
	}
	if _, err := s.Get(ctx, "a/c/missing"); !errors.Is(err, store.ErrNotExist) {
		t.Fatalf("Get of a missing key: %v; want ErrNotExist", err)
	}
	flush(s)
}

// TestSecondOpenFromDisk: a second cache on the same folder (a remount)
// reads everything from disk: no request at all, the same bytes; the
// metadata key Revalidate names costs one conditional GET answered 304.
func TestSecondOpenFromDisk(t *testing.T) {
	dir := t.TempDir()
	f := newFar(20)
	c, s := open(t, dir, f, Options{})
	readAll(t, s, f, 20)
	if got := f.reqs.Load(); got != 21 {
		t.Errorf("first open: %d requests; want 21 (20 values, ranges served from them, 1 missing key)", got)
	}
	if st := c.Stats(); st.Misses != 21 || st.Hits != 20 {
		t.Errorf("first open: stats %+v; want 21 misses, 20 hits (the ranges)", st)
	}
	f.reqs.Store(0)
	isMeta := func(k string) bool { return strings.HasSuffix(k, ".json") }
	c2, s2 := open(t, dir, f, Options{Revalidate: isMeta})
	readAll(t, s2, f, 20)
	if got := f.reqs.Load(); got != 0 {
		t.Errorf("second open: %d requests; want 0", got)
	}
	if st := c2.Stats(); st.HitRate() != 1 {
		t.Errorf("second open: stats %+v; want every read a hit", st)
	}
	for range 2 {
		if b, err := s2.Get(context.Background(), "a/zarr.json"); err != nil || string(b) != `{"zarr_format":3}` {
			t.Fatalf("zarr.json: %q, %v", b, err)
		}
	}
	if f.reqs.Load() != 1 || f.conds.Load() != 0 {
		t.Errorf("metadata read twice, never cached before: %d requests, %d conditional; want 1, 0", f.reqs.Load(), f.conds.Load())
	}
	_, s3 := open(t, dir, f, Options{Revalidate: isMeta})
	for range 2 {
		s3.Get(context.Background(), "a/zarr.json")
	}
	if f.reqs.Load() != 1 || f.conds.Load() != 1 {
		t.Errorf("metadata read twice in a third open: %d requests, %d conditional; want 1, 1 (a 304 once)", f.reqs.Load(), f.conds.Load())
	}
	// A metadata document read as a range (as the engine reads them):
	// once from the store, then a 304 per open, then a change brings the
	// new value.
	f.set("b/zarr.json", []byte(`{"zarr_format":3}`))
	f.reqs.Store(0)
	f.conds.Store(0)
	doc := func(s store.Store) string {
		b, err := s.GetRange(context.Background(), "b/zarr.json", store.Range(0, 1000))
		if err != nil {
			t.Fatal(err)
		}
		flush(s)
		return string(b)
	}
	doc(s)
	_, s4 := open(t, dir, f, Options{Revalidate: isMeta})
	doc(s4)
	doc(s4)
	if f.reqs.Load() != 1 || f.conds.Load() != 1 {
		t.Errorf("a document's range: %d requests, %d answered 304; want 1, 1", f.reqs.Load(), f.conds.Load())
	}
	f.set("b/zarr.json", []byte(`{"zarr_format":3,"new":1}`))
	_, s5 := open(t, dir, f, Options{Revalidate: isMeta})
	if got := doc(s5); got != `{"zarr_format":3,"new":1}` || doc(s5) != got {
		t.Errorf("a changed document: %q", got)
	}
	if f.reqs.Load() != 2 || f.conds.Load() != 1 {
		t.Errorf("a changed document read twice: %d requests, %d answered 304; want 2, 1", f.reqs.Load(), f.conds.Load())
	}
	if line := c2.StatsLine(); !strings.Contains(line, "(42 of 43 reads from disk") {
		t.Errorf("StatsLine = %q", line)
	}
}

// TestSharedFolder: two caches on one folder reading the same values at
// once fetch each value once.
func TestSharedFolder(t *testing.T) {
	dir := t.TempDir()
	f := newFar(16)
	f.delay = 20 * time.Millisecond
	_, s1 := open(t, dir, f, Options{})
	_, s2 := open(t, dir, f, Options{})
	var wg sync.WaitGroup
	for _, s := range []store.Store{s1, s2, s1, s2} {
		wg.Go(func() {
			for i := range 16 {
				key := fmt.Sprintf("a/c/%d", i)
				if b, err := s.Get(context.Background(), key); err != nil || !bytes.Equal(b, f.m[key]) {
					t.Errorf("Get(%q): %d bytes, %v", key, len(b), err)
				}
			}
		})
	}
	wg.Wait()
	if got := f.reqs.Load(); got != 16 {
		t.Errorf("two caches × two readers of 16 values: %d requests; want 16", got)
	}
}

// TestSharedProcesses: the same across processes (the entry lock is
// flock): this test binary run twice at once on one folder fetches
// each value once in all (counted in a file the children append to).
func TestSharedProcesses(t *testing.T) {
	if dir := os.Getenv("DISKCACHE_CHILD_DIR"); dir != "" {
		f := newFar(16)
		f.delay = 30 * time.Millisecond
		_, s := open(t, dir, f, Options{})
		readAll(t, s, f, 16)
		out, _ := os.OpenFile(filepath.Join(dir, "count"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		fmt.Fprintf(out, "%d\n", f.reqs.Load())
		out.Close()
		return
	}
	dir := t.TempDir()
	var cmds []*exec.Cmd
	for range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestSharedProcesses$", "-test.count=1")
		cmd.Env = append(os.Environ(), "DISKCACHE_CHILD_DIR="+dir)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for _, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(filepath.Join(dir, "count"))
	var a, c int
	if n, _ := fmt.Sscan(string(b), &a, &c); n != 2 || a+c != 17 {
		t.Errorf("two processes reading 16 values and a missing key: requests %q; want 17 in all", b)
	}
}

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
			flush(s2)
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
// and a changed value replaces its entry.
func TestLive(t *testing.T) {
	dir := t.TempDir()
	f := newFar(3)
	open(t, dir, f, Options{}) // nothing
	_, s := open(t, dir, f, Options{Live: true})
	ctx := context.Background()
	readAll(t, s, f, 3)
	f.reqs.Store(0)
	c2, s2 := open(t, dir, f, Options{Live: true})
	readAll(t, s2, f, 3)
	// Each Get and each GetRange asks (a range from the whole value's
	// entry once that is current): 3 ranges in the first open, 6 reads in
	// the second; no body.
	if f.conds.Load() != 9 || f.reqs.Load() != 1 {
		t.Errorf("live: %d conditional GETs answered 304, %d others; want 9, 1 (the missing key)", f.conds.Load(), f.reqs.Load())
	}
	if st := c2.Stats(); st.Revalidated != 6 {
		t.Errorf("live: stats %+v; want 6 revalidated", st)
	}
	f.set("a/c/1", []byte("changed"))
	if b, err := s2.Get(ctx, "a/c/1"); err != nil || string(b) != "changed" {
		t.Fatalf("a changed value: %q, %v", b, err)
	}
	// An immutable open now reads the new value from disk.
	f.reqs.Store(0)
	_, s3 := open(t, dir, f, Options{})
	if b, err := s3.Get(ctx, "a/c/1"); err != nil || string(b) != "changed" || f.reqs.Load() != 0 {
		t.Errorf("after the change, an immutable open: %q, %v, %d requests; want the new value from disk", b, err, f.reqs.Load())
	}
	// GetIfChanged passes through; a new value replaces the entry.
	ig := s2.(store.InfoGetter)
	_, info, _ := ig.GetRangeInfo(ctx, "a/c/1", store.All)
	if _, _, err := ig.GetIfChanged(ctx, "a/c/1", info); !errors.Is(err, store.ErrNotModified) {
		t.Errorf("GetIfChanged of an unchanged value: %v", err)
	}
	f.set("a/c/1", []byte("again"))
	if b, _, err := ig.GetIfChanged(ctx, "a/c/1", info); err != nil || string(b) != "again" {
		t.Errorf("GetIfChanged of a changed value: %q, %v", b, err)
	}
	if b, err := s3.Get(ctx, "a/c/1"); err != nil || string(b) != "again" {
		t.Errorf("after GetIfChanged, the entry: %q, %v", b, err)
	}
}

// TestOffline: with Offline, a store that fails is answered from disk
// (revalidation included), once logged; without it the error stands.
func TestOffline(t *testing.T) {
	dir := t.TempDir()
	f := newFar(3)
	_, s := open(t, dir, f, Options{})
	readAll(t, s, f, 3)
	s.(store.Stater).Stat(context.Background(), "a/c/0")
	f.down.Store(true)
	ctx := context.Background()
	for _, live := range []bool{false, true} {
		_, s := open(t, dir, f, Options{Live: live})
		_, err := s.Get(ctx, "a/c/2")
		if live && err == nil {
			t.Errorf("live, store down, no --cache-offline: Get succeeded")
		}
		if !live && err != nil {
			t.Errorf("immutable, store down: Get: %v; want it from disk", err)
		}
		var logs []string
		c, so := open(t, dir, f, Options{Live: live, Offline: true, Logf: func(format string, args ...any) { logs = append(logs, fmt.Sprintf(format, args...)) }})
		readAll(t, so, f, 3)
		if _, err := so.(store.Stater).Stat(ctx, "a/c/0"); err != nil {
			t.Errorf("offline Stat: %v", err)
		}
		if _, err := so.Get(ctx, "a/c/9"); err == nil || errors.Is(err, store.ErrNotExist) {
			t.Errorf("offline Get of a value never cached: %v; want the store's error", err)
		}
		if live && (len(logs) != 1 || c.Stats().Offline == 0) {
			t.Errorf("live offline: logs %q, stats %+v; want one line", logs, c.Stats())
		}
	}
}

// TestEviction: the folder stays within MaxSize, the least recently used
// entries going first.
func TestEviction(t *testing.T) {
	dir := t.TempDir()
	f := newFar(40)
	c, s := open(t, dir, f, Options{MaxSize: 64 << 10})
	ctx := context.Background()
	for i := range 40 {
		s.Get(ctx, fmt.Sprintf("a/c/%d", i))
		flush(s)
		for c.evicting.Load() {
			time.Sleep(time.Millisecond)
		}
	}
	var total int64
	for _, p := range entryFiles(t, dir) {
		fi, _ := os.Stat(p)
		total += fi.Size()
	}
	if total > 64<<10 {
		t.Errorf("after 40 values of ~3 KiB: %d bytes; want at most 64 KiB", total)
	}
	if _, err := os.Stat(f.pathOf(dir, "a/c/39")); err != nil {
		t.Errorf("the last value read was evicted: %v", err)
	}
	if _, err := os.Stat(f.pathOf(dir, "a/c/0")); err == nil {
		t.Errorf("the first value read is still there")
	}
	if st, err := Usage(dir); err != nil || st.Bytes != total || st.Entries == 0 {
		t.Errorf("Usage = %+v, %v; want %d bytes", st, err, total)
	}
	if err := Clear(dir); err != nil || len(entryFiles(t, dir)) != 0 {
		t.Errorf("Clear: %v", err)
	}
	// A cache whose folder was cleared under it goes on caching.
	s.Get(ctx, "a/c/5")
	flush(s)
	if c.noWrite.Load() {
		t.Errorf("after Clear, writing is off")
	}
	if _, err := os.Stat(f.pathOf(dir, "a/c/5")); err != nil {
		t.Errorf("after Clear, a read was not cached: %v", err)
	}
}

// TestConformance runs the store contract on a memory store through the
// cache (writes drop what is cached of a key).
func TestConformance(t *testing.T) {
	dir := t.TempDir()
	c, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	<-c.scanned // before TempDir's cleanup removes the folder
	n := 0
	storetest.Run(t, func(t *testing.T) store.Store {
		n++
		return c.Wrap(memory.New(), fmt.Sprint("mem", n))
	})
}

// TestOfflineListings: with Offline, listings a store answered before
// are served when it fails (an S3 mount's discovery), and a store that
// hangs past its deadline counts as failing; without Offline its error
// stands.
func TestOfflineListings(t *testing.T) {
	dir := t.TempDir()
	mem := memory.New()
	ctx := context.Background()
	for _, k := range []string{"g/zarr.json", "g/a/zarr.json", "g/a/c/0"} {
		mem.Set(ctx, k, []byte(k))
	}
	f, faulty := fault.New(mem)
	_, s := open(t, dir, faulty, Options{})
	keys, prefixes, err := s.(store.Lister).ListDir(ctx, "g")
	if err != nil {
		t.Fatal(err)
	}
	all, _ := s.(store.Lister).ListPrefix(ctx, "g/")
	page, more, _ := s.(store.PageLister).ListPrefixPage(ctx, "g/", "")
	f.Set(fault.Rule{Kind: fault.Hang})
	_, off := open(t, dir, deadline.New(faulty, 50*time.Millisecond), Options{Offline: true})
	k2, p2, err := off.(store.Lister).ListDir(ctx, "g")
	if err != nil || !slices.Equal(k2, keys) || !slices.Equal(p2, prefixes) {
		t.Errorf("offline ListDir = %q, %q, %v; want %q, %q", k2, p2, err, keys, prefixes)
	}
	if a2, err := off.(store.Lister).ListPrefix(ctx, "g/"); err != nil || !slices.Equal(a2, all) {
		t.Errorf("offline ListPrefix = %q, %v; want %q", a2, err, all)
	}
	if pg, m, err := off.(store.PageLister).ListPrefixPage(ctx, "g/", ""); err != nil || !slices.Equal(pg, page) || m != more {
		t.Errorf("offline ListPrefixPage = %q, %v, %v", pg, m, err)
	}
	if _, _, err := off.(store.Lister).ListDir(ctx, "other"); err == nil {
		t.Errorf("offline ListDir of a folder never listed: no error")
	}
	_, on := open(t, dir, deadline.New(faulty, 50*time.Millisecond), Options{})
	if _, _, err := on.(store.Lister).ListDir(ctx, "g"); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("ListDir of a hanging store without Offline: %v; want the deadline's error", err)
	}
	f.Clear()
}

// TestBackgroundQueue: a fetched value is written in the background from
// a copy of its own (the caller may change what it got), in a buffer
// reused by the next write; with maxQueued bytes queued a value is not
// kept (the read returns it, a later read fetches it again) rather than
// written on the read's path.
func TestBackgroundQueue(t *testing.T) {
	dir := t.TempDir()
	f := newFar(4)
	c, s := open(t, dir, f, Options{})
	ctx := context.Background()
	want := bytes.Clone(f.m["a/c/1"])
	b, err := s.Get(ctx, "a/c/1")
	if err != nil || !bytes.Equal(b, want) {
		t.Fatalf("Get: %d bytes, %v", len(b), err)
	}
	clear(b) // the caller's: the entry written is not changed by it
	flush(s)
	if e := c.load(c.path("far://x", "a/c/1", "a"), "far://x", "a/c/1", "a"); e == nil || !bytes.Equal(e.data, want) {
		t.Fatalf("entry after the caller changed its bytes: %v", e)
	}
	c.wmu.Lock()
	if len(c.free) != 1 || c.queued != 0 || c.pending != 0 {
		t.Errorf("after the write: %d free buffers, %d bytes queued, %d pending; want 1, 0, 0", len(c.free), c.queued, c.pending)
	}
	reused := &c.free[0][:1][0]
	c.wmu.Unlock()
	buf, q := c.background(header{Store: "far://x", Key: "a/c/0", Range: "a"}, f.m["a/c/0"])
	if q != queuedWrite || &buf[0] != reused {
		t.Errorf("background of a smaller value: %v, reused %v; want queued in the free buffer", q, &buf[0] == reused)
	}
	c.doneWrite(buf)

	// Full: the read still answers, nothing is written, nothing waits.
	c.wmu.Lock()
	c.queued = maxQueued - 100
	c.wmu.Unlock()
	reqs := f.reqs.Load()
	for range 2 {
		if b, err := s.Get(ctx, "a/c/2"); err != nil || !bytes.Equal(b, f.m["a/c/2"]) {
			t.Fatalf("Get with the queue full: %d bytes, %v", len(b), err)
		}
	}
	flush(s)
	if got := f.reqs.Load() - reqs; got != 2 {
		t.Errorf("two reads with the queue full: %d requests; want 2 (not kept)", got)
	}
	if _, err := os.Stat(c.path("far://x", "a/c/2", "a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("entry written with the queue full: %v", err)
	}
	c.wmu.Lock()
	c.queued = 0
	c.wmu.Unlock()
	if _, err := s.Get(ctx, "a/c/2"); err != nil {
		t.Fatal(err)
	}
	flush(s)
	if _, err := s.Get(ctx, "a/c/2"); err != nil || f.reqs.Load()-reqs != 3 {
		t.Errorf("with room again: %d requests, %v; want the value kept after one more", f.reqs.Load()-reqs, err)
	}
}
