package diskcache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/deadline"
	"github.com/zarrfs/zarrfs/store/fault"
	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/store/storetest"
)

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
	if c.noWrite.Load() {
		t.Errorf("after Clear, writing is off")
	}
	if _, err := os.Stat(f.pathOf(dir, "a/c/5")); err != nil {
		t.Errorf("after Clear, a read was not cached: %v", err)
	}
}

// TestConformance runs the store contract on a memory store through the
// cache (writes drop what is cached of a key), which has the memory
// store's optional interfaces and store.AllocGetter and store.Holder,
// served by the cache.
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
		m := memory.New()
		s := c.Wrap(m, fmt.Sprint("mem", n))
		want := append(storetest.Capabilities(m), "AllocGetter", "Holder")
		if got := storetest.Capabilities(s); !slices.Equal(got, want) {
			t.Fatalf("cached memory store implements %v; want %v", got, want)
		}
		return s
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

// TestBehind: while the folder is behind the store (a write slower than
// its fetch), a miss is read and not kept, and counted; once it is not,
// misses are kept again.
func TestBehind(t *testing.T) {
	for _, tc := range []struct {
		took, fetched time.Duration
		want          bool
	}{
		{50 * time.Millisecond, time.Millisecond, false}, // quick enough
		{150 * time.Millisecond, 50 * time.Millisecond, true},
		{150 * time.Millisecond, time.Second, false}, // a value the store took longer to give
		{slowWrite, 0, false},
	} {
		if got := behind(tc.took, tc.fetched); got != tc.want {
			t.Errorf("behind(%v, %v) = %v; want %v", tc.took, tc.fetched, got, tc.want)
		}
	}

	dir := t.TempDir()
	f := newFar(4)
	c, s := open(t, dir, f, Options{})
	ctx := context.Background()
	c.behindUntil.Store(time.Now().Add(time.Hour).UnixNano())
	for range 2 {
		if b, err := s.Get(ctx, "a/c/2"); err != nil || !bytes.Equal(b, f.m["a/c/2"]) {
			t.Fatalf("Get while behind: %d bytes, %v", len(b), err)
		}
	}
	if got := f.reqs.Load(); got != 2 {
		t.Errorf("two reads while behind: %d requests; want 2 (not kept)", got)
	}
	if _, err := os.Stat(c.path("far://x", "a/c/2", "a")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("entry written while behind: %v", err)
	}
	if st := c.Stats(); st.NotKept != 2 || !strings.Contains(c.StatsLine(), "2 not kept") {
		t.Errorf("stats while behind: %+v, %q; want 2 not kept", st, c.StatsLine())
	}
	c.behindUntil.Store(time.Now().Add(-time.Second).UnixNano())
	for range 2 {
		if _, err := s.Get(ctx, "a/c/2"); err != nil {
			t.Fatal(err)
		}
	}
	if got := f.reqs.Load(); got != 3 {
		t.Errorf("with the folder caught up: %d requests in all; want 3 (kept after one more)", got)
	}
}
