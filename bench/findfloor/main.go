// Command findfloor serves, from tables in memory, the directory tree a
// zarrfs mount of `make bench`'s hierarchy shows (a root of groups, groups
// of arrays, each array a directory of seven files; a group's dataset.nc
// and info.txt, the root's info.txt), answering the requests find(1) makes
// as zarrfs does (no OPENDIR, READDIRPLUS with directories' attributes and
// files' entries without, long timeouts) and doing nothing else. The time
// find takes over it is what any FUSE server would take on this machine:
// the floor under zarrfs's figure (bench/bench.py, BENCH.md). With -stat
// it is the floor of ls -lR too: files' entries carry their attributes (as
// zarrfs's do while a reader stats what it lists), files can be looked up,
// and getxattr answers EOPNOTSUPP (ls asks for security.selinux and
// system.posix_acl_access, and stops asking on a device that answers so),
// as zarrfs does.
//
//	findfloor [-stat] -groups 100 -arrays 100 MOUNTPOINT
//
// It serves until the mount point is unmounted.
package main

import (
	"flag"
	"fmt"
	"log"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// files are the entries of an array's directory in a zarrfs mount.
var files = []string{".zarray", "data", "data.hdr", "data.nhdr", "data.npy", "info.txt", "preview.png"}

// tree numbers its directories: 1 the root, 2…groups+1 the groups, then
// each group's arrays in turn.
type tree struct {
	fuse.RawFileSystem
	groups, arrays uint64
	stat           bool // files' entries carry attributes (-stat)
}

// fileBase numbers files: fileBase + directory node × 16 + index.
const fileBase = 1 << 40

func fileAttr(node uint64, a *fuse.Attr) {
	a.Ino, a.Mode, a.Nlink, a.Blksize = node, syscall.S_IFREG|0o444, 1, 32<<10
}

// level tells the root (0), a group (1) and an array (2) apart; i is the
// group's or array's index.
func (t *tree) level(node uint64) (level int, i uint64) {
	switch {
	case node == 1:
		return 0, 0
	case node < 2+t.groups:
		return 1, node - 2
	default:
		return 2, node - 2 - t.groups
	}
}

// entries lists a directory: names, and for subdirectories their nodes (0
// for files).
func (t *tree) entries(node uint64) (names []string, nodes []uint64) {
	level, i := t.level(node)
	switch level {
	case 0:
		names, nodes = append(names, ".zgroup"), append(nodes, 0)
		for g := range t.groups {
			names, nodes = append(names, fmt.Sprintf("g%04d", g)), append(nodes, 2+g)
		}
		names, nodes = append(names, "info.txt"), append(nodes, 0)
	case 1:
		names, nodes = append(names, ".zgroup"), append(nodes, 0)
		for a := range t.arrays {
			names, nodes = append(names, fmt.Sprintf("a%03d", a)), append(nodes, 2+t.groups+i*t.arrays+a)
		}
		names, nodes = append(names, "dataset.nc", "info.txt"), append(nodes, 0, 0)
	default:
		names, nodes = files, make([]uint64, len(files))
	}
	return names, nodes
}

const timeout = 24 * time.Hour

func dirAttr(node uint64, a *fuse.Attr) {
	a.Ino, a.Mode, a.Nlink, a.Blksize = node, syscall.S_IFDIR|0o555, 2, 32<<10
}

func setEntry(node uint64, out *fuse.EntryOut) {
	out.NodeId = node
	out.SetEntryTimeout(timeout)
	out.SetAttrTimeout(timeout)
	dirAttr(node, &out.Attr)
}

func (t *tree) Lookup(_ <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	names, nodes := t.entries(h.NodeId)
	for k, n := range names {
		switch {
		case n != name:
		case nodes[k] != 0:
			setEntry(nodes[k], out)
			return fuse.OK
		case t.stat:
			t.setFileEntry(h.NodeId, k, out)
			return fuse.OK
		}
	}
	return fuse.ENOENT
}

// setFileEntry sets the entry of file k of directory dir.
func (t *tree) setFileEntry(dir uint64, k int, out *fuse.EntryOut) {
	out.NodeId = fileBase + dir*16 + uint64(k)
	out.SetEntryTimeout(timeout)
	out.SetAttrTimeout(timeout)
	fileAttr(out.NodeId, &out.Attr)
}

// GetXAttr: attributes are not supported, as zarrfs answers the names ls
// asks for (ENOSYS would stop all getxattr, which zarrfs cannot do).
func (t *tree) GetXAttr(<-chan struct{}, *fuse.InHeader, string, []byte) (uint32, fuse.Status) {
	return 0, fuse.Status(syscall.EOPNOTSUPP)
}

func (t *tree) ListXAttr(<-chan struct{}, *fuse.InHeader, []byte) (uint32, fuse.Status) {
	return 0, fuse.OK
}

func (t *tree) Forget(uint64, uint64) {}

func (t *tree) GetAttr(_ <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	out.SetTimeout(timeout)
	if in.NodeId >= fileBase {
		fileAttr(in.NodeId, &out.Attr)
	} else {
		dirAttr(in.NodeId, &out.Attr)
	}
	return fuse.OK
}

func (t *tree) OpenDir(<-chan struct{}, *fuse.OpenIn, *fuse.OpenOut) fuse.Status { return fuse.ENOSYS }

func (t *tree) ReadDirPlus(_ <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	names, nodes := t.entries(in.NodeId)
	for k := int(in.Offset); k < len(names); k++ {
		mode := uint32(syscall.S_IFREG)
		if nodes[k] != 0 {
			mode = syscall.S_IFDIR
		}
		e := out.AddDirLookupEntry(fuse.DirEntry{Name: names[k], Mode: mode, Ino: max(nodes[k], 1<<40+uint64(k)), Off: uint64(k + 1)})
		if e == nil {
			break
		}
		if nodes[k] != 0 {
			setEntry(nodes[k], e)
		} else if t.stat {
			t.setFileEntry(in.NodeId, k, e)
		}
	}
	return fuse.OK
}

func main() {
	groups := flag.Uint64("groups", 100, "groups under the root")
	arrays := flag.Uint64("arrays", 100, "arrays in each group")
	stat := flag.Bool("stat", false, "serve ls -lR too: files' entries with attributes, lookups of files, getxattr")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: findfloor [-stat] [-groups N] [-arrays N] MOUNTPOINT")
	}
	// As zarrfs mount: a Go processor more than go-fuse's readers.
	runtime.GOMAXPROCS(max(runtime.GOMAXPROCS(0), 2) + 2)
	t := &tree{RawFileSystem: fuse.NewDefaultRawFileSystem(), groups: *groups, arrays: *arrays, stat: *stat}
	srv, err := fuse.NewServer(t, flag.Arg(0), &fuse.MountOptions{
		FsName: "findfloor", Name: "findfloor", Options: []string{"ro", "default_permissions"},
		DisableSplice: true, DirectMount: os.Geteuid() == 0,
		ExtraCapabilities: fuse.CAP_NO_OPENDIR_SUPPORT,
	})
	if err != nil {
		log.Fatal(err)
	}
	srv.Serve()
}
