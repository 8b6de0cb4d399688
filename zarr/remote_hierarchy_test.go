package zarr

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

// listingStore records the keys read and the directories listed. It
// pages its listings (store.PageLister) by pageSize keys (1000 when 0).
type listingStore struct {
	store.Store
	pageSize int
	mu       sync.Mutex
	gets     map[string]int
	lists    map[string]int
	pages    map[string]int
	// gate, when set, is called before each read (under no lock).
	gate func(key string)
}

func (s *listingStore) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	s.mu.Lock()
	s.gets[key]++
	gate := s.gate
	s.mu.Unlock()
	if gate != nil {
		gate(key)
	}
	return s.Store.GetRange(ctx, key, r)
}

func (s *listingStore) Get(ctx context.Context, key string) ([]byte, error) {
	return s.GetRange(ctx, key, store.All)
}

func (s *listingStore) ListDir(ctx context.Context, dir string) ([]string, []string, error) {
	s.mu.Lock()
	s.lists[dir]++
	s.mu.Unlock()
	return s.Store.(store.Lister).ListDir(ctx, dir)
}

func (s *listingStore) ListPrefix(ctx context.Context, prefix string) ([]string, error) {
	return s.Store.(store.Lister).ListPrefix(ctx, prefix)
}

func (s *listingStore) ListPrefixPage(ctx context.Context, prefix, after string) ([]string, bool, error) {
	s.mu.Lock()
	s.pages[prefix]++
	s.mu.Unlock()
	keys, err := s.Store.(store.Lister).ListPrefix(ctx, prefix)
	if err != nil {
		return nil, false, err
	}
	i, found := slices.BinarySearch(keys, after)
	if found {
		i++
	}
	keys = keys[i:]
	n := s.pageSize
	if n == 0 {
		n = 1000
	}
	if len(keys) > n {
		return keys[:n], true, nil
	}
	return keys, false, nil
}

// counts returns and resets what was read and listed.
func (s *listingStore) counts() (gets, lists map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	gets, lists = s.gets, s.lists
	s.gets, s.lists = map[string]int{}, map[string]int{}
	return gets, lists
}

// treeStore is a v2 hierarchy of groups g0..g{groups-1}, each with arrays
// a0..a{arrays-1} (some with attributes).
func treeStore(t *testing.T, groups, arrays int) *listingStore {
	arr := `{"zarr_format": 2, "shape": [3], "chunks": [2], "dtype": "<i2", "compressor": null, "filters": null, "fill_value": 9, "order": "C"}`
	m := map[string]string{".zgroup": `{"zarr_format": 2}`}
	for g := range groups {
		m[fmt.Sprintf("g%d/.zgroup", g)] = `{"zarr_format": 2}`
		for a := range arrays {
			m[fmt.Sprintf("g%d/a%d/.zarray", g, a)] = arr
			m[fmt.Sprintf("g%d/a%d/0", g, a)] = "\x01\x00\x02\x00"
			if a%2 == 0 {
				m[fmt.Sprintf("g%d/a%d/.zattrs", g, a)] = `{"n": 1}`
			}
		}
	}
	return &listingStore{Store: memStore(t, m), gets: map[string]int{}, lists: map[string]int{}, pages: map[string]int{}}
}

// walk returns every node below path as "path kind documents attributes".
func walk(t *testing.T, h *Hierarchy, path string) []string {
	t.Helper()
	kids, err := h.Children(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, k := range kids {
		var docs []string
		for _, d := range k.Documents {
			docs = append(docs, d.Name+"="+string(d.Data))
		}
		out = append(out, fmt.Sprintf("%s %v %s %s", k.Path, k.Kind, strings.Join(docs, ","), k.Attributes))
		out = append(out, walk(t, h, k.Path)...)
	}
	return out
}

// A remote hierarchy shows the same nodes, documents and attributes as a
// local one.
func TestRemoteHierarchySameNodes(t *testing.T) {
	ctx := context.Background()
	st := treeStore(t, 3, 5)
	local, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	remote, err := Open(ctx, st, Options{Remote: true, Concurrency: 8})
	if err != nil {
		t.Fatal(err)
	}
	a, b := walk(t, local, ""), walk(t, remote, "")
	if len(a) != 3+3*5 || !slices.Equal(a, b) {
		t.Errorf("local walk\n%s\nremote walk\n%s", strings.Join(a, "\n"), strings.Join(b, "\n"))
	}
}

// Listing a group of a remote hierarchy loads its child groups' children
// in the background; listing those groups then asks the store nothing, and
// each group is listed once. It runs in a synctest bubble, where
// synctest.Wait, not polling, sees the background loads done.
func TestRemoteHierarchyLoadsALevelAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		st := treeStore(t, 3, 4)
		h, err := Open(ctx, st, Options{Remote: true, Concurrency: 8})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Children(ctx, ""); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // the level ahead has loaded (no timing asserted)
		h.mu.Lock()
		n := len(h.nodes)
		h.mu.Unlock()
		if n != 1+3+3*4 {
			t.Fatalf("%d nodes loaded; want all %d, loaded ahead", n, 1+3+3*4)
		}
		_, lists := st.counts()
		for g := range 3 {
			if lists[fmt.Sprintf("g%d", g)] != 1 {
				t.Errorf("g%d listed %d times ahead; want once", g, lists[fmt.Sprintf("g%d", g)])
			}
		}
		for g := range 3 {
			kids, err := h.Children(ctx, fmt.Sprintf("g%d", g))
			if err != nil || len(kids) != 4 {
				t.Fatalf("g%d: %d children, %v", g, len(kids), err)
			}
		}
		if gets, lists := st.counts(); len(gets)+len(lists) != 0 {
			t.Errorf("listing groups loaded ahead read %v and listed %v; want nothing", slices.Sorted(maps.Keys(gets)), lists)
		}
	})
}

// A remote v2 hierarchy lists every key below a group it lists, one
// page, along with the group's children: no missing document that page
// passed over is asked for. With pages of 4 keys, the page of g0 holds
// the keys of a0 and stops there: the .zattrs missing from a1 and a3 are
// asked for, as without a listing; g0's own (.zarray, .zattrs), which
// the root's page passed, are not. (The root's are, before any listing.)
// It runs in a synctest bubble, where synctest.Wait sees the level ahead
// loaded.
func TestRemoteHierarchyListingSparesMissingDocuments(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		for _, c := range []struct {
			pageSize int
			want     []string // the missing documents below the root asked for
		}{
			{0, nil},
			{4, []string{"g0/a1/.zattrs", "g0/a3/.zattrs"}},
		} {
			st := treeStore(t, 1, 5)
			st.pageSize = c.pageSize
			local, err := Open(ctx, st, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want := walk(t, local, "")
			h, err := Open(ctx, st, Options{Remote: true, Concurrency: 8})
			if err != nil {
				t.Fatal(err)
			}
			st.counts()
			if got := walk(t, h, ""); !slices.Equal(got, want) {
				t.Errorf("pages of %d: remote walk\n%s\nlocal walk\n%s", c.pageSize, strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
			// Groups of the level ahead load in the background: wait for them.
			synctest.Wait()
			gets, _ := st.counts()
			var missing []string
			for key, n := range gets {
				if _, err := st.Store.Get(ctx, key); err != nil {
					if strings.Contains(key, "/") {
						missing = append(missing, key)
					}
				} else if n != 1 {
					t.Errorf("pages of %d: %s read %d times", c.pageSize, key, n)
				}
			}
			slices.Sort(missing)
			if !slices.Equal(missing, c.want) {
				t.Errorf("pages of %d: missing documents asked for: %q, want %q", c.pageSize, missing, c.want)
			}
			if st.pages[""] != 1 || st.pages["g0/"] != 1 {
				t.Errorf("pages of %d: listed %v; want one page below the root and g0 each", c.pageSize, st.pages)
			}
		}
	})
}

// Listing a group of a remote hierarchy with consolidated metadata
// reads nothing; FetchStored then fetches what the store holds under its children's documents (the bytes
// their files show) all at once, in the background: each of those reads
// waits until all have started, and each is read once, nothing else.
func TestRemoteHierarchyFetchesStoredDocumentsAtOnce(t *testing.T) {
	ctx := context.Background()
	st := treeStore(t, 1, 4)
	meta := map[string]json.RawMessage{}
	keys, err := st.Store.(store.Lister).ListPrefix(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	var docs []string
	for _, k := range keys {
		if name := k[strings.LastIndexByte(k, '/')+1:]; strings.HasPrefix(name, ".z") {
			b, err := st.Store.Get(ctx, k)
			if err != nil {
				t.Fatal(err)
			}
			meta[k] = b
			if strings.HasPrefix(k, "g0/a") {
				docs = append(docs, k)
			}
		}
	}
	zm, err := json.Marshal(map[string]any{"zarr_consolidated_format": 1, "metadata": meta})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Store.(store.Writer).Set(ctx, ".zmetadata", zm); err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, st, Options{Remote: true, Concurrency: 16})
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	started := map[string]bool{}
	all := make(chan struct{})
	st.gate = func(key string) {
		mu.Lock()
		started[key] = true
		if len(started) == len(docs) {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
		case <-time.After(20 * time.Second):
			t.Errorf("%s: not every document of g0's children was asked for while it was read (%d of %d)", key, len(started), len(docs))
		}
	}
	st.counts()
	kids, err := h.Children(ctx, "g0")
	if err != nil || len(kids) != 4 {
		t.Fatalf("g0: %d children, %v", len(kids), err)
	}
	if gets, _ := st.counts(); len(gets) != 0 {
		t.Errorf("listing g0 read %v; want nothing (FetchStored is asked for)", gets)
	}
	h.FetchStored(ctx, kids)
	for _, k := range kids {
		for _, d := range k.Documents {
			b, err := d.Bytes(ctx) // waits for the fetch under way
			if want, _ := st.Store.Get(ctx, k.Path+"/"+d.Name); err != nil || string(b) != string(want) {
				t.Errorf("%s/%s: %q, %v; want the stored %q", k.Path, d.Name, b, err, want)
			}
		}
	}
	gets, _ := st.counts()
	if want := len(docs); len(gets) != want {
		t.Errorf("read %v; want each of the %d documents of g0's children once", gets, want)
	}
	for k, n := range gets {
		if n != 1 || !slices.Contains(docs, k) {
			t.Errorf("%s read %d times; want only g0's children's documents, once", k, n)
		}
	}
}

// A node of a remote v2 hierarchy reads .zarray and .zattrs at once: the
// read of .zarray waits until that of .zattrs has started.
func TestRemoteHierarchyReadsDocumentsAtOnce(t *testing.T) {
	ctx := context.Background()
	st := treeStore(t, 1, 1)
	h, err := Open(ctx, st, Options{Remote: true})
	if err != nil {
		t.Fatal(err)
	}
	attrsStarted := make(chan struct{})
	var once sync.Once
	st.gate = func(key string) {
		switch key {
		case "g0/a0/.zattrs":
			once.Do(func() { close(attrsStarted) })
		case "g0/a0/.zarray":
			select {
			case <-attrsStarted:
			case <-time.After(20 * time.Second):
				t.Error(".zattrs was not asked for while .zarray was being read")
			}
		}
	}
	n, err := h.Node(ctx, "g0/a0")
	if err != nil || n.Kind != KindArray || string(n.Attributes) != `{"n": 1}` {
		t.Fatalf("g0/a0: %+v, %v", n, err)
	}
}

// noteRead measures a sequential reader's rate once its stream is old
// enough, and a seek starts a new stream with no rate, so that the
// read-ahead of a remote store (sized by the rate) starts small again.
func TestNoteReadRate(t *testing.T) {
	a := &Array{}
	if seq, cont, rate := a.noteRead(0, 1<<20); !seq || cont || rate != 0 {
		t.Errorf("first read: %v %v %v", seq, cont, rate)
	}
	time.Sleep(2 * minRateAge)
	if seq, cont, rate := a.noteRead(1<<20, 1<<20); !seq || !cont || rate <= 0 {
		t.Errorf("second read, %v later: %v %v rate %v; want a rate", 2*minRateAge, seq, cont, rate)
	}
	if seq, cont, rate := a.noteRead(100<<20, 4096); seq || cont || rate != 0 {
		t.Errorf("after a seek: %v %v %v", seq, cont, rate)
	}
}

// Opening a remote hierarchy asks for zarr.json and .zmetadata at once (the
// read of zarr.json waits until that of .zmetadata has started), and for
// .zarray, .zgroup and the v1 document only when neither is there.
func TestRemoteOpenProbesAtOnce(t *testing.T) {
	ctx := context.Background()
	st := treeStore(t, 1, 1)
	zmetaStarted := make(chan struct{})
	var once sync.Once
	st.gate = func(key string) {
		switch key {
		case v2Consolidated:
			once.Do(func() { close(zmetaStarted) })
		case v3Doc:
			select {
			case <-zmetaStarted:
			case <-time.After(20 * time.Second):
				t.Error(".zmetadata was not asked for while zarr.json was being read")
			}
		}
	}
	h, err := Open(ctx, st, Options{Remote: true})
	if err != nil || h.Format() != FormatV2 {
		t.Fatalf("open: %v, %v", h, err)
	}
	gets, _ := st.counts()
	want := map[string]int{v3Doc: 1, v2Consolidated: 1, v2ArrayDoc: 1, v2GroupDoc: 1, v1MetaDoc: 1}
	if !maps.Equal(gets, want) {
		t.Errorf("open read %v; want %v", gets, want)
	}
	// The root's load asks again for none of the documents the probe
	// found missing (nor for .zgroup, which it found).
	if _, err := h.Node(ctx, ""); err != nil {
		t.Fatal(err)
	}
	gets, _ = st.counts()
	for _, key := range []string{v3Doc, v2Consolidated, v2ArrayDoc, v2GroupDoc, v1MetaDoc} {
		if gets[key] != 0 {
			t.Errorf("loading the root read %s again (%v)", key, gets)
		}
	}

	// A consolidated hierarchy needs the first round only.
	cons := &listingStore{Store: memStore(t, map[string]string{
		".zgroup":    `{"zarr_format": 2}`,
		".zmetadata": `{"zarr_consolidated_format": 1, "metadata": {".zgroup": {"zarr_format": 2}}}`,
	}), gets: map[string]int{}, lists: map[string]int{}}
	if _, err := Open(ctx, cons, Options{Remote: true}); err != nil {
		t.Fatal(err)
	}
	gets, _ = cons.counts()
	if want := map[string]int{v3Doc: 1, v2Consolidated: 1}; !maps.Equal(gets, want) {
		t.Errorf("open of a consolidated hierarchy read %v; want %v", gets, want)
	}
}
