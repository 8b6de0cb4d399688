//go:build linux

package fs

import (
	"context"
	"syscall"
	"testing"
	"unsafe"

	"github.com/hanwen/go-fuse/v2/fuse"
)

func TestDirHandle(t *testing.T) {
	ctx := context.Background()
	h := &dirHandle{d: &dirNode{m: &mountFS{}}, l: listing{dirents: []fuse.DirEntry{{Name: "a", Off: 1}, {Name: "b", Off: 2}, {Name: "c", Off: 3}}}}
	read := func() string {
		var s string
		for {
			e, errno := h.Readdirent(ctx)
			if errno != 0 {
				t.Fatal(errno)
			}
			if e == nil {
				return s
			}
			s += e.Name
		}
	}
	for _, c := range []struct {
		off  uint64
		want string
		err  syscall.Errno
	}{
		{0, "abc", 0},
		{1, "bc", 0},
		{3, "", 0},
		{2, "c", 0},
		{4, "", syscall.EINVAL},
	} {
		if errno := h.Seekdir(ctx, c.off); errno != c.err {
			t.Errorf("Seekdir(%d) = %v, want %v", c.off, errno, c.err)
			continue
		}
		if c.err != 0 {
			continue
		}
		if got := read(); got != c.want {
			t.Errorf("after Seekdir(%d): %q, want %q", c.off, got, c.want)
		}
	}
}

func TestReadOnlyNodeOperations(t *testing.T) {
	ctx := context.Background()
	var r readOnly
	for name, errno := range map[string]syscall.Errno{
		"setattr":     r.Setattr(ctx, nil, nil, nil),
		"setxattr":    r.Setxattr(ctx, "user.x", nil, 0),
		"removexattr": r.Removexattr(ctx, "user.x"),
		"unlink":      r.Unlink(ctx, "x"),
		"rmdir":       r.Rmdir(ctx, "x"),
		"rename":      r.Rename(ctx, "x", nil, "y", 0),
	} {
		if errno != syscall.EROFS {
			t.Errorf("%s: %v, want EROFS", name, errno)
		}
	}
	for _, c := range []struct {
		flags uint32
		want  syscall.Errno
	}{
		{syscall.O_RDONLY, 0},
		{syscall.O_RDONLY | syscall.O_NONBLOCK, 0},
		{syscall.O_WRONLY, syscall.EROFS},
		{syscall.O_RDWR, syscall.EROFS},
		{syscall.O_RDONLY | syscall.O_TRUNC, syscall.EROFS},
	} {
		if got := checkReadOnly(c.flags); got != c.want {
			t.Errorf("checkReadOnly(%#x) = %v, want %v", c.flags, got, c.want)
		}
	}
}

// TestDirNodeSize: a large hierarchy has a directory node per array, each
// with go-fuse's Inode inside; the node stays within the allocator's
// 192-byte size class.
func TestDirNodeSize(t *testing.T) {
	if n := unsafe.Sizeof(dirNode{}); n > 192 {
		t.Errorf("dirNode is %d bytes, over 192", n)
	}
}
