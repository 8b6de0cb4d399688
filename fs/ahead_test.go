package fs

import (
	"context"
	"fmt"
	"io"
	"log"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/zarr"
)

// listAhead lists the directories it is given in the background and
// stops when none is left; it queues no more than maxAhead.
func TestListAhead(t *testing.T) {
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
	mfs := &mountFS{log: errorLog{logger: log.New(io.Discard, "", 0)}}
	mfs.snaps.v = newSnapshot(h, 0, Config{}.Views)
	for _, k := range kids {
		d := newDirNode(mfs, mfs.snaps.v, k)
		dirs = append(dirs, d)
		mfs.ahead.add(d)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mfs.ahead.mu.Lock()
		running := mfs.ahead.running
		mfs.ahead.mu.Unlock()
		if !running {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("still listing ahead")
		}
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
		a.add(newDirNode(mfs, mfs.snaps.v, &zarr.Node{Path: fmt.Sprint(i), Kind: zarr.KindArray}))
	}
	if len(a.queue) != maxAhead {
		t.Errorf("%d directories queued, want at most %d", len(a.queue), maxAhead)
	}
}
