//go:build linux

package fs

import (
	"sync/atomic"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// noOpendir is the node file system (go-fuse's raw bridge) serving
// directories without OPENDIR and RELEASEDIR requests. Where the kernel
// supports it (Linux 5.1, FUSE_NO_OPENDIR_SUPPORT), OPENDIR answers ENOSYS
// once and the kernel then lists directories with READDIRPLUS alone,
// handle 0: each of those opens a handle in the bridge, seeks to the
// offset asked and releases it. Listing a directory for the first time
// then takes two requests (its entries, then the empty reply that ends
// them) instead of four; every request is a round trip through the kernel,
// which is what find(1) over a large hierarchy waits on. The kernel then
// caches every listing (as FOPEN_CACHE_DIR would), so a listing read
// again costs no request at all, where it cost OPENDIR and RELEASEDIR.
// Live mounts, whose listings change, keep OPENDIR (Mount).
type noOpendir struct {
	fuse.RawFileSystem
	supported atomic.Bool // the kernel offered FUSE_NO_OPENDIR_SUPPORT
}

// Init implements fuse.RawFileSystem.
func (n *noOpendir) Init(s *fuse.Server) {
	n.RawFileSystem.Init(s)
	n.supported.Store(s.KernelSettings().Flags64()&fuse.CAP_NO_OPENDIR_SUPPORT != 0)
}

// OpenDir implements fuse.RawFileSystem.
func (n *noOpendir) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	if n.supported.Load() {
		return fuse.ENOSYS
	}
	return n.RawFileSystem.OpenDir(cancel, in, out)
}

// ReadDirPlus implements fuse.RawFileSystem.
func (n *noOpendir) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return n.withHandle(cancel, in, out, n.RawFileSystem.ReadDirPlus)
}

// ReadDir implements fuse.RawFileSystem.
func (n *noOpendir) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	return n.withHandle(cancel, in, out, n.RawFileSystem.ReadDir)
}

// withHandle runs read with in's handle, or, for handle 0 (no OPENDIR was
// sent), with a handle opened for it and released after.
func (n *noOpendir) withHandle(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList,
	read func(<-chan struct{}, *fuse.ReadIn, *fuse.DirEntryList) fuse.Status) fuse.Status {
	if in.Fh != 0 {
		return read(cancel, in, out)
	}
	var open fuse.OpenOut
	if st := n.RawFileSystem.OpenDir(cancel, &fuse.OpenIn{InHeader: in.InHeader, Flags: in.Flags}, &open); !st.Ok() {
		return st
	}
	defer n.RawFileSystem.ReleaseDir(&fuse.ReleaseIn{InHeader: in.InHeader, Fh: open.Fh})
	withFh := *in
	withFh.Fh = open.Fh
	return read(cancel, &withFh, out)
}
