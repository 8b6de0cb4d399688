//go:build linux

package fs

import (
	"context"
	"fmt"
	"io"
	"log"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/zarrfs/zarrfs/internal/logonce"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
)

// listAhead lists the directories it is given in the background and
// stops when none is left; it queues no more than maxAhead. The tests of
// listing ahead run in synctest bubbles, where synctest.Wait returns once
// the background work is done or blocked (they polled).
func TestListAhead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		ctx := context.Background()
		h, err := zarr.Open(ctx, treeStore(t, 1, 5), zarr.Options{})
		if err != nil {
			t.Fatal(err)
		}
		kids, err := h.Children(ctx, "g00")
		if err != nil || len(kids) != 5 {
			t.Fatalf("g00: %d children, %v", len(kids), err)
		}
		var dirs []*dirNode
		mfs := &mountFS{log: errorLog{once: logonce.Log{Logger: log.New(io.Discard, "", 0)}}}
		mfs.snaps = view.NewTree(h, Config{}.Views, 0, nil, nil)
		for _, k := range kids {
			d := newDirNode(mfs, mfs.snaps.Current(), k)
			dirs = append(dirs, d)
			mfs.ahead.add(d)
		}
		synctest.Wait() // the listing ahead is done, or blocked
		mfs.ahead.mu.Lock()
		running := mfs.ahead.running
		mfs.ahead.mu.Unlock()
		if running {
			t.Fatal("still listing ahead")
		}
		for i, d := range dirs {
			d.mu.Lock()
			n := len(d.l.entries)
			d.mu.Unlock()
			if n == 0 {
				t.Errorf("%s was not listed ahead", kids[i].Path)
			}
		}
		// A full queue takes no more.
		var a listAhead
		a.running = true // no worker: the queue only fills
		for i := range maxAhead + 10 {
			a.add(newDirNode(mfs, mfs.snaps.Current(), &zarr.Node{Path: fmt.Sprint(i), Kind: zarr.KindArray}))
		}
		if len(a.queue) != maxAhead {
			t.Errorf("%d directories queued, want at most %d", len(a.queue), maxAhead)
		}
	})
}

// readsStore records the keys read from a memory store.
type readsStore struct {
	*memory.Store
	mu   sync.Mutex
	keys []string
}

func (s *readsStore) note(key string) {
	s.mu.Lock()
	s.keys = append(s.keys, key)
	s.mu.Unlock()
}

func (s *readsStore) Get(ctx context.Context, key string) ([]byte, error) {
	s.note(key)
	return s.Store.Get(ctx, key)
}

func (s *readsStore) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	s.note(key)
	return s.Store.GetRange(ctx, key, r)
}

// read reports whether a key below prefix was read.
func (s *readsStore) read(prefix string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.keys, func(k string) bool { return strings.HasPrefix(k, prefix) })
}

// A walk that lists a group has the group it lists next loaded ahead: the
// root's first child group when the root is listed, the next sibling when
// a group of arrays is, and nothing past the last group. Nothing else is
// loaded that the walk did not reach.
func TestListAheadWalk(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := &readsStore{Store: treeStore(t, 3, 4)}
		raw := rawTree(t, st)
		buf := make([]byte, 32<<10)
		groups, _, _ := listPlus(t, raw, fuse.FUSE_ROOT_ID, buf) // g00, g01, g02
		for i, want := range []struct{ loaded, notLoaded string }{
			{"g00/a000/", "g01/a"}, // after the root
			{"g01/a000/", "g02/a"}, // after g00
			{"g02/a000/", ""},      // after g01
			{"", ""},               // after g02
		} {
			synctest.Wait() // the loading ahead is done, or blocked
			if want.loaded != "" && !st.read(want.loaded) {
				t.Fatalf("step %d: %s not loaded ahead", i, want.loaded)
			}
			if want.notLoaded != "" && st.read(want.notLoaded) {
				t.Errorf("step %d: %s loaded before a walk reached it", i, want.notLoaded)
			}
			if i < len(groups) {
				listPlus(t, raw, groups[i], buf)
			}
		}
	})
}
