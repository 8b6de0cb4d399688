package serve

import (
	"context"
	"crypto/sha256"
	"errors"
	"hash/fnv"
	"io"
	"io/fs"
	"net"
	"os"
	"strings"
	"sync"
	"time"

	billy "github.com/go-git/go-billy/v5"
	nfs "github.com/willscott/go-nfs"
	nfsfile "github.com/willscott/go-nfs/file"

	"github.com/zarrfs/zarrfs/zarr"
)

// This file is the NFSv3 front end: github.com/willscott/go-nfs speaks the
// protocol over a read-only billy.Filesystem of the tree (nfsFS), with
// file handles that stay valid for the server's life (nfsHandler), and
// rpc.go answers what go-nfs does not (MOUNT's EXPORT, DUMP and UMNTALL)
// and bounds what a client may make it allocate.

// NFS is the read-only NFSv3 server of a tree, with the MOUNT protocol
// on the same port.
type NFS struct {
	t *Tree
	h *nfsHandler

	mu    sync.Mutex
	ln    net.Listener
	conns map[net.Conn]struct{}
	done  bool
}

// NewNFS returns the NFS server of t.
func NewNFS(t *Tree) *NFS {
	root := &nfsFS{t: t}
	return &NFS{t: t, h: &nfsHandler{root: root, paths: map[[handleLen]byte][]string{}}, conns: map[net.Conn]struct{}{}}
}

func init() {
	// go-nfs logs every failed request at ErrorLevel (a LOOKUP of a name
	// that is not there among them): the server logs engine errors
	// itself, once each.
	nfs.Log.SetLevel(nfs.FatalLevel)
}

// Serve answers NFS and MOUNT requests on ln until Close.
func (s *NFS) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.done {
		s.mu.Unlock()
		return net.ErrClosed
	}
	s.ln = ln
	s.mu.Unlock()
	srv := &nfs.Server{Handler: s.h, Context: context.Background()}
	err := srv.Serve(&rpcListener{Listener: ln, s: s})
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return net.ErrClosed
	}
	return err
}

// Close stops the server: the listener and every connection.
func (s *NFS) Close() error {
	s.mu.Lock()
	s.done = true
	ln := s.ln
	conns := make([]net.Conn, 0, len(s.conns))
	for c := range s.conns {
		conns = append(conns, c)
	}
	s.mu.Unlock()
	for _, c := range conns {
		c.Close() // which untracks it
	}
	if ln != nil {
		return ln.Close()
	}
	return nil
}

// track adds or removes a connection of the server.
func (s *NFS) track(c net.Conn, add bool) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if add {
		if s.done {
			return false
		}
		s.conns[c] = struct{}{}
	} else {
		delete(s.conns, c)
	}
	return true
}

// handleLen is the length of a file handle: the first bytes of the
// SHA-256 of the node's path, so that a path has the same handle for the
// server's life (and across servers of the same tree).
const handleLen = 16

// nfsHandler is go-nfs's Handler: MOUNT of any directory of the tree,
// read-only, and file handles that are never forgotten (go-nfs's caching
// handler evicts them, and a client holding an evicted one gets ESTALE).
type nfsHandler struct {
	root *nfsFS

	mu    sync.RWMutex
	paths map[[handleLen]byte][]string   // the path of every handle given out
	nodes map[[handleLen]byte]cachedNode // the nodes READ and FSINFO resolved
}

// Mount answers MOUNT of dirpath: the root, or any directory of the tree
// (clients such as libnfs's nfs-cat mount the directory of the file they
// read).
func (h *nfsHandler) Mount(ctx context.Context, _ net.Conn, req nfs.MountRequest) (nfs.MountStatus, billy.Filesystem, []nfs.AuthFlavor) {
	p := string(req.Dirpath)
	n, err := h.root.t.Resolve(ctx, p)
	switch {
	case errors.Is(err, ErrBadPath):
		return nfs.MountStatusErrInval, nil, nil
	case errors.Is(err, zarr.ErrNotExist):
		return nfs.MountStatusErrNoEnt, nil, nil
	case err != nil:
		h.root.t.log.log(err)
		return nfs.MountStatusErrIO, nil, nil
	case !n.IsDir():
		return nfs.MountStatusErrNotDir, nil, nil
	}
	return nfs.MountStatusOk, &nfsFS{t: h.root.t, prefix: n.Path}, []nfs.AuthFlavor{nfs.AuthFlavorNull, nfs.AuthFlavorUnix}
}

// Change returns nil: nothing can be changed.
func (h *nfsHandler) Change(billy.Filesystem) billy.Change { return nil }

// FSStat reports a file system with no free space and no free files.
func (h *nfsHandler) FSStat(context.Context, billy.Filesystem, *nfs.FSStat) error { return nil }

// ToHandle returns the handle of path in f.
func (h *nfsHandler) ToHandle(f billy.Filesystem, path []string) []byte {
	if f == nil {
		return nil // go-nfs asks for one after a failed MNT too
	}
	full := f.Join(path...)
	names, _ := SplitPath(full)
	sum := sha256.Sum256([]byte(strings.Join(names, "/")))
	var k [handleLen]byte
	copy(k[:], sum[:])
	h.mu.RLock()
	_, ok := h.paths[k]
	h.mu.RUnlock()
	if !ok {
		h.mu.Lock()
		h.paths[k] = names
		h.mu.Unlock()
	}
	return k[:]
}

// FromHandle returns the tree and the path of a handle given out before.
func (h *nfsHandler) FromHandle(fh []byte) (billy.Filesystem, []string, error) {
	var k [handleLen]byte
	if len(fh) != handleLen {
		return nil, nil, &nfs.NFSStatusError{NFSStatus: nfs.NFSStatusBadHandle}
	}
	copy(k[:], fh)
	h.mu.RLock()
	p, ok := h.paths[k]
	h.mu.RUnlock()
	if !ok {
		return nil, nil, &nfs.NFSStatusError{NFSStatus: nfs.NFSStatusStale}
	}
	return h.root, append([]string(nil), p...), nil // go-nfs appends to it
}

// InvalidateHandle forgets nothing: the tree does not change under a
// handle.
func (h *nfsHandler) InvalidateHandle(billy.Filesystem, []byte) error { return nil }

// HandleLimit is how many handles the handler keeps: all of them.
func (h *nfsHandler) HandleLimit() int { return int(^uint(0) >> 1) }

// nfsFS is the tree as a read-only billy.Filesystem, rooted at prefix.
type nfsFS struct {
	t      *Tree
	prefix string
}

var errReadOnly = &os.PathError{Op: "write", Err: fs.ErrPermission}

// Capabilities says the tree can be read and not written: go-nfs then
// answers every changing procedure with NFS3ERR_ROFS.
func (f *nfsFS) Capabilities() billy.Capability {
	return billy.ReadCapability | billy.SeekCapability
}

func (f *nfsFS) Join(elem ...string) string {
	var parts []string
	if f.prefix != "" {
		parts = append(parts, f.prefix)
	}
	for _, e := range elem {
		if e != "" {
			parts = append(parts, e)
		}
	}
	return strings.Join(parts, "/")
}

// resolve returns the node at p (a path from Join: from the tree's root).
func (f *nfsFS) resolve(p string) (Node, error) {
	n, err := f.t.Resolve(context.Background(), p)
	if err != nil {
		f.t.log.log(err)
		if errors.Is(err, zarr.ErrNotExist) || errors.Is(err, ErrBadPath) {
			return Node{}, &os.PathError{Op: "lookup", Path: p, Err: fs.ErrNotExist}
		}
		return Node{}, &os.PathError{Op: "lookup", Path: p, Err: err}
	}
	return n, nil
}

func (f *nfsFS) Stat(p string) (os.FileInfo, error) {
	n, err := f.resolve(p)
	if err != nil {
		return nil, err
	}
	return f.info(n), nil
}

func (f *nfsFS) Lstat(p string) (os.FileInfo, error) { return f.Stat(p) }

func (f *nfsFS) ReadDir(p string) ([]os.FileInfo, error) {
	n, err := f.resolve(p)
	if err != nil {
		return nil, err
	}
	es, err := f.t.List(context.Background(), n)
	if err != nil {
		f.t.log.log(err)
		return nil, &os.PathError{Op: "readdir", Path: p, Err: err}
	}
	out := make([]os.FileInfo, len(es))
	for i, e := range es {
		out[i] = f.info(e)
	}
	return out, nil
}

func (f *nfsFS) Open(p string) (billy.File, error) {
	n, err := f.resolve(p)
	if err != nil {
		return nil, err
	}
	if n.IsDir() {
		return nil, &os.PathError{Op: "open", Path: p, Err: errors.New("is a directory")}
	}
	ctx := context.Background()
	if err := n.File.Check(ctx); err != nil {
		f.t.log.log(err)
		return nil, &os.PathError{Op: "open", Path: p, Err: err}
	}
	return &nfsFile{n: n, size: n.Size(ctx), log: &f.t.log}, nil
}

func (f *nfsFS) OpenFile(p string, flag int, _ os.FileMode) (billy.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, errReadOnly
	}
	return f.Open(p)
}

func (f *nfsFS) Create(string) (billy.File, error)           { return nil, errReadOnly }
func (f *nfsFS) Rename(string, string) error                 { return errReadOnly }
func (f *nfsFS) Remove(string) error                         { return errReadOnly }
func (f *nfsFS) TempFile(string, string) (billy.File, error) { return nil, errReadOnly }
func (f *nfsFS) MkdirAll(string, os.FileMode) error          { return errReadOnly }
func (f *nfsFS) Symlink(string, string) error                { return errReadOnly }
func (f *nfsFS) Readlink(p string) (string, error) {
	return "", &os.PathError{Op: "readlink", Path: p, Err: fs.ErrInvalid}
}
func (f *nfsFS) Chroot(p string) (billy.Filesystem, error) {
	return &nfsFS{t: f.t, prefix: f.Join(p)}, nil
}
func (f *nfsFS) Root() string                               { return "/" + f.prefix }
func (f *nfsFS) info(n Node) os.FileInfo                    { return &nfsInfo{n: n, t: f.t} }
func (f *nfsFS) String() string                             { return "zarrfs:/" + f.prefix }
func (f *nfsFS) Chmod(string, os.FileMode) error            { return errReadOnly }
func (f *nfsFS) Chtimes(string, time.Time, time.Time) error { return errReadOnly }
func (f *nfsFS) Lchown(string, int, int) error              { return errReadOnly }
func (f *nfsFS) Chown(string, int, int) error               { return errReadOnly }

// nfsInfo is a node's os.FileInfo; its Sys carries the attributes go-nfs
// reads besides (owner, link count, file id).
type nfsInfo struct {
	n Node
	t *Tree
}

func (i *nfsInfo) Name() string {
	if i.n.Name == "" {
		return "/"
	}
	return i.n.Name
}
func (i *nfsInfo) Size() int64        { return i.n.Size(context.Background()) }
func (i *nfsInfo) ModTime() time.Time { return i.n.ModTime }
func (i *nfsInfo) IsDir() bool        { return i.n.IsDir() }
func (i *nfsInfo) Mode() fs.FileMode {
	if i.n.IsDir() {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i *nfsInfo) Sys() any {
	nlink := uint32(1)
	if i.n.IsDir() && i.n.Dir.Kind == zarr.KindArray {
		nlink = 2 // as the mount says: an array's directory has no subdirectories
	}
	return nfsfile.FileInfo{Nlink: nlink, UID: i.t.uid, GID: i.t.gid, Fileid: fileID(i.n.Path)}
}

// fileID is a node's NFS file id: 1 for the root, else a hash of its path.
func fileID(p string) uint64 {
	if p == "" {
		return 1
	}
	h := fnv.New64a()
	io.WriteString(h, p)
	if id := h.Sum64(); id > 1 {
		return id
	}
	return 2
}

// nfsFile is an open file of the tree: go-nfs opens one for each READ.
type nfsFile struct {
	n    Node
	size int64
	off  int64
	log  *errorLog
}

func (f *nfsFile) Name() string { return f.n.Name }

func (f *nfsFile) ReadAt(p []byte, off int64) (int, error) {
	if off >= f.size {
		return 0, io.EOF
	}
	if int64(len(p)) > f.size-off {
		p = p[:f.size-off]
	}
	k, err := f.n.File.ReadAt(context.Background(), p, off)
	if err != nil && !errors.Is(err, io.EOF) {
		f.log.log(err)
	}
	if err == nil && off+int64(k) >= f.size {
		err = io.EOF
	}
	return k, err
}

func (f *nfsFile) Read(p []byte) (int, error) {
	k, err := f.ReadAt(p, f.off)
	f.off += int64(k)
	return k, err
}

func (f *nfsFile) Seek(off int64, whence int) (int64, error) {
	switch whence {
	case io.SeekCurrent:
		off += f.off
	case io.SeekEnd:
		off += f.size
	}
	if off < 0 {
		return 0, fs.ErrInvalid
	}
	f.off = off
	return off, nil
}

func (f *nfsFile) Write([]byte) (int, error) { return 0, errReadOnly }
func (f *nfsFile) Truncate(int64) error      { return errReadOnly }
func (f *nfsFile) Close() error              { return nil }
func (f *nfsFile) Lock() error               { return nil }
func (f *nfsFile) Unlock() error             { return nil }
