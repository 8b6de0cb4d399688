package fs

import (
	"syscall"
	"testing"

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
