//go:build linux

package fs

import (
	"context"
	"hash/fnv"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/zarrfs/zarrfs/view"
)

// Permissions: everything is read-only for everyone.
const (
	dirMode  = syscall.S_IFDIR | 0o555
	fileMode = syscall.S_IFREG | 0o444
)

// blockSize is the st_blksize of files: tools such as cat and cp size
// their reads by it, and FUSE replies are up to 1 MiB.
const blockSize = 1 << 20

// dirBlockSize is the st_blksize of directories. glibc's opendir sizes its
// getdents64 buffer by it (at least 32 KiB, at most 1 MiB), and the kernel
// allocates that much for every READDIRPLUS request it sends for the
// directory, two per listing at least: with 1 MiB, find over 10,000 arrays
// spent a fifth of its time allocating, mapping and freeing 20 GiB of
// pages. 32 KiB holds some 200 entries.
const dirBlockSize = 32 << 10

// rootIno is the inode number of the mount's root directory.
const rootIno = 1

// mountFS is what every node of one mount shares.
type mountFS struct {
	snaps     *view.Tree // the hierarchy shown, renewed when live (view/tree.go)
	log       errorLog
	mountTime time.Time
	uid, gid  uint32
	ahead     listAhead // arrays listed ahead of a reader walking the tree
	stats     statWatch // whether readers stat the files they list
}

// ino returns the inode number of the entry name in the directory of the
// node at dirPath; ("", "") is the root. It is a 64-bit hash of the two, so
// it is the same for the same entry across lookups, forgets and mounts.
func ino(dirPath, name string) uint64 {
	if dirPath == "" && name == "" {
		return rootIno
	}
	h := fnv.New64a()
	h.Write([]byte(dirPath))
	h.Write([]byte{0})
	h.Write([]byte(name))
	n := h.Sum64()
	if n <= rootIno {
		n += rootIno + 1
	}
	return n
}

// setAttr fills the attributes every node shares.
func (m *mountFS) setAttr(out *fuse.Attr, mode uint32, size uint64, nlink uint32, mtime time.Time) {
	if mtime.IsZero() {
		mtime = m.mountTime
	}
	out.Mode = mode
	out.Size = size
	out.Nlink = nlink
	out.Blksize = blockSize
	if mode&syscall.S_IFMT == syscall.S_IFDIR {
		out.Blksize = dirBlockSize
	}
	out.Blocks = (size + 511) / 512
	out.Owner = fuse.Owner{Uid: m.uid, Gid: m.gid}
	out.SetTimes(&mtime, &mtime, &mtime)
}

// attrNode is implemented by every node of the mount.
type attrNode interface {
	gofs.InodeEmbedder
	attr(ctx context.Context, out *fuse.Attr)
}

// readOnly answers every operation that would change the file system with
// EROFS, and statfs(2) with a file system that has no free space. Every
// node embeds it.
type readOnly struct{}

// Statfs reports the block size of FUSE replies, the longest name a store
// key segment can have on Linux, and no free space.
func (readOnly) Statfs(_ context.Context, out *fuse.StatfsOut) syscall.Errno {
	*out = fuse.StatfsOut{}
	out.Bsize = blockSize
	out.Frsize = blockSize
	out.NameLen = 255
	return 0
}

func (readOnly) Setattr(context.Context, gofs.FileHandle, *fuse.SetAttrIn, *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

func (readOnly) Setxattr(context.Context, string, []byte, uint32) syscall.Errno {
	return syscall.EROFS
}

func (readOnly) Removexattr(context.Context, string) syscall.Errno { return syscall.EROFS }

func (readOnly) Mkdir(context.Context, string, uint32, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Mknod(context.Context, string, uint32, uint32, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Create(context.Context, string, uint32, uint32, *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	return nil, nil, 0, syscall.EROFS
}

func (readOnly) Symlink(context.Context, string, string, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Link(context.Context, gofs.InodeEmbedder, string, *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (readOnly) Unlink(context.Context, string) syscall.Errno { return syscall.EROFS }

func (readOnly) Rmdir(context.Context, string) syscall.Errno { return syscall.EROFS }

func (readOnly) Rename(context.Context, string, gofs.InodeEmbedder, string, uint32) syscall.Errno {
	return syscall.EROFS
}

// checkReadOnly refuses an open for writing or truncation.
func checkReadOnly(flags uint32) syscall.Errno {
	if flags&syscall.O_ACCMODE != syscall.O_RDONLY || flags&syscall.O_TRUNC != 0 {
		return syscall.EROFS
	}
	return 0
}
