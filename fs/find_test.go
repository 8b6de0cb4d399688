//go:build linux

package fs

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"log"
	"syscall"
	"testing"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/zarr"
)

// treeStore returns a memory store holding a v2 hierarchy of groups × per
// arrays (metadata only), as make bench's hierarchy: g00/a000 …
func treeStore(tb testing.TB, groups, per int) *memory.Store {
	tb.Helper()
	ctx := context.Background()
	st := memory.New()
	if err := zarr.CreateGroup(ctx, st, "", zarr.GroupMeta{Format: zarr.FormatV2}); err != nil {
		tb.Fatal(err)
	}
	for g := range groups {
		grp := fmt.Sprintf("g%02d", g)
		if err := zarr.CreateGroup(ctx, st, grp, zarr.GroupMeta{Format: zarr.FormatV2}); err != nil {
			tb.Fatal(err)
		}
		for a := range per {
			if _, err := zarr.CreateArray(ctx, st, fmt.Sprintf("%s/a%03d", grp, a), zarr.ArrayMeta{Format: zarr.FormatV2,
				Shape: []int64{64}, ChunkShape: []int64{8}, DataType: "<i4", FillValue: 0}); err != nil {
				tb.Fatal(err)
			}
		}
	}
	return st
}

// listPlus lists the directory nodeID as the kernel does for find(1) on a
// mount without OPENDIR: READDIRPLUS requests with handle 0 from offset 0
// until one comes back empty. It returns the node ids of its
// subdirectories, and the number of entries and of requests.
func listPlus(tb testing.TB, raw fuse.RawFileSystem, nodeID uint64, buf []byte) (dirs []uint64, entries, requests int) {
	for off := uint64(0); ; {
		out := fuse.NewDirEntryList(buf, off)
		in := &fuse.ReadIn{InHeader: fuse.InHeader{NodeId: nodeID}, Offset: off, Size: uint32(len(buf))}
		requests++
		if st := raw.ReadDirPlus(nil, in, out); !st.Ok() {
			tb.Fatalf("READDIRPLUS %d at %d: %v", nodeID, off, st)
		}
		data := out.Bytes()
		if len(data) == 0 {
			return dirs, entries, requests
		}
		for len(data) > 0 {
			// fuse_direntplus: fuse_entry_out, then fuse_dirent (ino,
			// off, namelen, type, name padded to 8 bytes).
			e := data[unsafe.Sizeof(fuse.EntryOut{}):]
			id := binary.LittleEndian.Uint64(data)
			namelen := int(binary.LittleEndian.Uint32(e[16:]))
			if binary.LittleEndian.Uint32(e[20:]) == syscall.S_IFDIR>>12 {
				dirs = append(dirs, id)
			}
			entries++
			data = e[(24+namelen+7)&^7:]
		}
		off = out.Offset
	}
}

// walkPlus lists the directory nodeID and everything below it with
// listPlus. It returns the number of entries and of READDIRPLUS requests.
func walkPlus(tb testing.TB, raw fuse.RawFileSystem, nodeID uint64, buf []byte) (entries, requests int) {
	dirs, entries, requests := listPlus(tb, raw, nodeID, buf)
	for _, d := range dirs {
		n, r := walkPlus(tb, raw, d, buf)
		entries, requests = entries+n, requests+r
	}
	return entries, requests
}

// rawTree opens the hierarchy in st and returns the mount's file system
// over it, as the kernel would talk to it (no kernel involved).
func rawTree(tb testing.TB, st store.Store) fuse.RawFileSystem {
	tb.Helper()
	ctx := context.Background()
	h, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	root, err := h.Node(ctx, "")
	if err != nil {
		tb.Fatal(err)
	}
	raw, _ := newRawFS(h, root, Config{}, log.New(io.Discard, "", 0))
	return raw
}

// TestWalkPlus checks walkPlus, BenchmarkFind's walker, against the tree:
// every group and array directory is listed with two requests.
func TestWalkPlus(t *testing.T) {
	entries, requests := walkPlus(t, rawTree(t, treeStore(t, 3, 5)), fuse.FUSE_ROOT_ID, make([]byte, 32<<10))
	// root: .zgroup, info.txt, 3 groups; a group: .zgroup, info.txt,
	// dataset.nc, 5 arrays; an array: .zarray, data, data.npy, data.hdr,
	// data.npy.hdr, data.nhdr, info.txt.
	if want := 5 + 3*(8+5*7); entries != want {
		t.Errorf("%d entries, want %d", entries, want)
	}
	if want := 2 * (1 + 3 + 3*5); requests != want {
		t.Errorf("%d requests, want %d", requests, want)
	}
}

// BenchmarkFind measures what find(1) over a mount costs the daemon,
// without the kernel: the READDIRPLUS requests listing a hierarchy of 1,000
// arrays (10 groups of 100), each time in a freshly opened hierarchy, so
// that every node is loaded from the (memory) store. make bench measures
// find through the kernel on a directory store.
func BenchmarkFind(b *testing.B) {
	const groups, per = 10, 100
	st := treeStore(b, groups, per)
	buf := make([]byte, 32<<10) // find's getdents buffer
	b.ReportAllocs()
	for b.Loop() {
		walkPlus(b, rawTree(b, st), fuse.FUSE_ROOT_ID, buf)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*groups*per), "ns/array")
}
