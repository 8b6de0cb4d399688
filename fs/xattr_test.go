//go:build linux

package fs

import (
	"context"
	"errors"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
)

func TestXattrProtocol(t *testing.T) {
	x := xattrs(view.Xattrs(&zarr.Node{Kind: zarr.KindGroup, Format: zarr.FormatV1}))
	if n, errno := x.get("user.zarr.format", nil); n != 1 || errno != 0 {
		t.Errorf("size query = %d, %v; want 1, 0", n, errno)
	}
	buf := make([]byte, 8)
	if n, errno := x.get("user.zarr.format", buf); errno != 0 || string(buf[:n]) != "1" {
		t.Errorf("get = %q, %v; want \"1\"", buf[:n], errno)
	}
	if _, errno := x.get("user.zarr.shape", buf); errno != syscall.ENODATA {
		t.Errorf("missing attribute: errno %v, want ENODATA", errno)
	}
	if n, errno := x.list(nil); n != uint32(len("user.zarr.format\x00")) || errno != 0 {
		t.Errorf("list size = %d, %v", n, errno)
	}
	if _, errno := x.list(make([]byte, 3)); errno != syscall.ERANGE {
		t.Errorf("short list buffer: errno %v, want ERANGE", errno)
	}
	names := make([]byte, 64)
	if n, errno := x.list(names); errno != 0 || string(names[:n]) != "user.zarr.format\x00" {
		t.Errorf("list = %q, %v", names[:n], errno)
	}
}

// TestForeignXattrsNoLookup: the attributes ls -l asks for of every entry
// (security.selinux, system.posix_acl_access and _default) are EOPNOTSUPP,
// and other user.* names ENODATA, without a lookup: no renewal of a live mount's hierarchy (a store
// request), no node's attributes made (a view).
func TestForeignXattrsNoLookup(t *testing.T) {
	ctx := context.Background()
	m, n := exampleNode(t, "")
	var reopens atomic.Int32
	h := m.snaps.Current().H
	live := view.NewTree(h, view.Config{}, time.Nanosecond, func(context.Context, *zarr.Hierarchy) (*zarr.Hierarchy, error) {
		reopens.Add(1)
		return nil, errors.New("the store is not to be asked")
	}, func(err error) { m.log.errno(err) })
	v := view.NewSnapshot(h, 0, view.Config{}) // not asked of the tree: that would renew it
	children, err := h.Children(ctx, n.Path)
	if err != nil {
		t.Fatal(err)
	}
	var arr *zarr.Node
	for _, c := range children {
		if c.Kind == zarr.KindArray {
			arr = c
			break
		}
	}
	if arr == nil {
		t.Fatal("the example's root has no array")
	}
	file := fileOf(t, m, arr, "data") // from the tree that is not live
	m.snaps = live
	dir := newDirNode(m, v, arr)
	buf := make([]byte, 256)
	for _, c := range []struct {
		name string
		want syscall.Errno
	}{
		{"security.selinux", syscall.EOPNOTSUPP},
		{"system.posix_acl_access", syscall.EOPNOTSUPP},
		{"system.posix_acl_default", syscall.EOPNOTSUPP},
		{"trusted.x", syscall.EOPNOTSUPP},
		{"user.other", syscall.ENODATA},
	} {
		for _, dest := range [][]byte{nil, buf} {
			if _, errno := dir.Getxattr(ctx, c.name, dest); errno != c.want {
				t.Errorf("directory: %s: %v, want %v", c.name, errno, c.want)
			}
			if _, errno := file.Getxattr(ctx, c.name, dest); errno != c.want {
				t.Errorf("data: %s: %v, want %v", c.name, errno, c.want)
			}
		}
	}
	time.Sleep(20 * time.Millisecond) // a renewal would have started by now
	if r := reopens.Load(); r != 0 {
		t.Errorf("%d renewals of the hierarchy", r)
	}
	if file.x != nil {
		t.Error("the data file's attributes were made")
	}
	// user.zarr.* still answers.
	if k, errno := file.Getxattr(ctx, "user.zarr.format", buf); errno != 0 || k == 0 {
		t.Errorf("user.zarr.format: %d, %v", k, errno)
	}
}
