package serve

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"sync"

	nfs "github.com/willscott/go-nfs"

	"github.com/zarrfs/zarrfs/zarr"
)

// This file is the fast path of NFSv3 READ and FSINFO, answered by
// rpcConn without go-nfs. go-nfs v0.0.4 answers a READ by resolving the
// handle's path, opening and stat-ing the file again, allocating a buffer
// of the count asked for and copying the data twice through reflection's
// XDR encoder; a client that waits for each reply (libnfs's nfs-cat) then
// reads at half the mount's speed. Here a handle's file node is kept
// (for as long as the tree's snapshot is the same), the data is read
// straight into a pooled reply buffer after its header, and the reply
// goes out in one write. FSINFO is answered here so that the sizes it
// advertises (rtmax, rtpref) are the ones READ honours (go-nfs says
// 1 GiB).

// NFS procedure numbers answered here (RFC 1813).
const (
	nfsProcFSInfo = 19
	nfsVers       = 3
)

// NFS3 status codes of the fast path's replies.
const (
	nfs3OK        = 0
	nfs3ErrIO     = 5
	nfs3ErrStale  = 70
	nfs3ErrBadFH  = 10001
	nfs3ErrInval  = 22
	fattr3Len     = 84 // the XDR length of a fattr3
	readReplyHead = 4 + 24 + 4 + 4 + fattr3Len + 4 + 4 + 4
)

// nfsReplyBufs holds reply buffers big enough for a READ of maxReadCount.
var nfsReplyBufs = sync.Pool{New: func() any {
	b := make([]byte, readReplyHead+maxReadCount+4)
	return &b
}}

// cachedNode is the node of a handle, resolved in snapshot gen.
type cachedNode struct {
	n   Node
	gen uint64
}

// node returns the node of handle fh: status nfs3ErrBadFH for a handle
// that is not one of the server's, nfs3ErrStale for one never given out
// or no longer in the tree.
func (h *nfsHandler) node(ctx context.Context, fh []byte) (Node, uint32) {
	if len(fh) != handleLen {
		return Node{}, nfs3ErrBadFH
	}
	k := [handleLen]byte(fh)
	t := h.root.t
	gen := t.t.Current().Gen
	h.mu.RLock()
	c, cached := h.nodes[k]
	p, known := h.paths[k]
	h.mu.RUnlock()
	if cached && c.gen == gen {
		return c.n, nfs3OK
	}
	if !known {
		return Node{}, nfs3ErrStale
	}
	n, err := t.resolve(ctx, p)
	switch {
	case errors.Is(err, ErrBadPath), errors.Is(err, zarr.ErrNotExist):
		return Node{}, nfs3ErrStale
	case err != nil:
		t.log.log(err)
		return Node{}, nfs3ErrIO
	}
	h.mu.Lock()
	if h.nodes == nil {
		h.nodes = make(map[[handleLen]byte]cachedNode)
	}
	h.nodes[k] = cachedNode{n: n, gen: n.Gen()}
	h.mu.Unlock()
	return n, nfs3OK
}

// nfsCall returns the procedure of the NFSv3 call in rec and its
// arguments; ok is false for anything else.
func nfsCall(rec []byte) (proc uint32, args []byte, ok bool) {
	prog, proc, off, ok := callHeader(rec)
	if !ok || prog != progNFS || binary.BigEndian.Uint32(rec[16:]) != nfsVers {
		return 0, nil, false
	}
	return proc, rec[off:], true
}

// handleArg splits the file handle (opaque<64>) off the front of args.
func handleArg(args []byte) (fh, rest []byte, ok bool) {
	if len(args) < 4 {
		return nil, nil, false
	}
	n := int(binary.BigEndian.Uint32(args))
	if n > 64 || len(args) < 4+(n+3)&^3 {
		return nil, nil, false
	}
	return args[4 : 4+n], args[4+(n+3)&^3:], true
}

// replyHead writes into b the record mark (of a record of n bytes after
// it), and the header of a successful reply to the call rec, and returns
// the bytes after it.
func replyHead(b, rec []byte, n int) []byte {
	be := binary.BigEndian
	be.PutUint32(b, 1<<31|uint32(n))
	copy(b[4:8], rec[:4])  // xid
	be.PutUint32(b[8:], 1) // REPLY
	// MSG_ACCEPTED, a null verifier, SUCCESS.
	clear(b[12:28])
	return b[28:]
}

// putAttrs writes n's post_op_attr (present) into b, as go-nfs writes it
// (nfs.ToFileAttribute of nfsInfo), and returns the bytes after it.
func (h *nfsHandler) putAttrs(b []byte, n Node) []byte {
	be := binary.BigEndian
	a := nfs.ToFileAttribute(&nfsInfo{n: n, t: h.root.t}, n.Path)
	be.PutUint32(b, 1)
	for i, v := range []uint32{uint32(a.Type), a.FileMode, a.Nlink, a.UID, a.GID} {
		be.PutUint32(b[4+4*i:], v)
	}
	for i, v := range []uint64{a.Filesize, a.Used, uint64(a.SpecData[0])<<32 | uint64(a.SpecData[1]), a.FSID, a.Fileid} {
		be.PutUint64(b[24+8*i:], v)
	}
	for i, t := range []nfs.FileTime{a.Atime, a.Mtime, a.Ctime} {
		be.PutUint32(b[64+8*i:], t.Seconds)
		be.PutUint32(b[68+8*i:], t.Nseconds)
	}
	return b[4+fattr3Len:]
}

// errReply is the reply to rec of an NFS procedure that failed with
// status before it found a node: no attributes (the resfail of READ and
// FSINFO alike).
func errReply(rec []byte, status uint32) []byte {
	b := make([]byte, 4+24+8)
	rest := replyHead(b, rec, len(b)-4)
	binary.BigEndian.PutUint32(rest, status)
	return b // rest[4:]: post_op_attr absent, zero
}

// fastNFS answers the NFS calls READ and FSINFO in rec; nil for go-nfs to
// answer rec. A READ's reply is a buffer of nfsReplyBufs: put it back with
// putReply once it is written.
func (h *nfsHandler) fastNFS(rec []byte) []byte {
	proc, args, ok := nfsCall(rec)
	if !ok || (proc != nfsProcRead && proc != nfsProcFSInfo) {
		return nil
	}
	fh, rest, ok := handleArg(args)
	if !ok || (proc == nfsProcRead && len(rest) < 12) {
		return errReply(rec, nfs3ErrInval)
	}
	ctx := context.Background()
	n, status := h.node(ctx, fh)
	if status != nfs3OK {
		return errReply(rec, status)
	}
	if proc == nfsProcFSInfo {
		return h.fsinfo(rec, n)
	}
	if n.IsDir() {
		return nil // go-nfs says why
	}
	be := binary.BigEndian
	off, count := be.Uint64(rest), be.Uint32(rest[8:])
	count = min(count, maxReadCount)
	size := n.Size(ctx)
	eof := uint32(0)
	if off >= uint64(size) {
		count, eof = 0, 1
	} else if uint64(size)-off <= uint64(count) {
		count, eof = uint32(uint64(size)-off), 1
	}
	bp := nfsReplyBufs.Get().(*[]byte)
	b := *bp
	data := b[readReplyHead : readReplyHead+int(count)]
	k := 0
	if count > 0 {
		var err error
		k, err = n.File.ReadAt(ctx, data, int64(off))
		if err != nil && !errors.Is(err, io.EOF) {
			nfsReplyBufs.Put(bp)
			h.root.t.log.log(err)
			return errReply(rec, nfs3ErrIO)
		}
		if errors.Is(err, io.EOF) {
			eof = 1 // the file is shorter than it said
		}
	}
	pad := (4 - k%4) % 4
	clear(b[readReplyHead+k : readReplyHead+k+pad])
	total := readReplyHead + k + pad
	r := replyHead(b, rec, total-4)
	be.PutUint32(r, nfs3OK)
	r = h.putAttrs(r[4:], n)
	be.PutUint32(r, uint32(k))
	be.PutUint32(r[4:], eof)
	be.PutUint32(r[8:], uint32(k))
	return b[:total]
}

// putReply gives a reply of fastNFS back to nfsReplyBufs, if it is one.
func putReply(b []byte) {
	if cap(b) == readReplyHead+maxReadCount+4 {
		b = b[:cap(b)]
		nfsReplyBufs.Put(&b)
	}
}

// fsinfo answers FSINFO of n: reads and directory reads of up to
// maxReadCount, the sizes READ honours.
func (h *nfsHandler) fsinfo(rec []byte, n Node) []byte {
	be := binary.BigEndian
	b := make([]byte, 4+24+4+4+fattr3Len+48)
	r := replyHead(b, rec, len(b)-4)
	be.PutUint32(r, nfs3OK)
	r = h.putAttrs(r[4:], n)
	// rtmax, rtpref, rtmult, wtmax, wtpref, wtmult, dtpref
	for i, v := range []uint32{maxReadCount, maxReadCount, 4096, maxReadCount, maxReadCount, 4096, 64 << 10} {
		be.PutUint32(r[4*i:], v)
	}
	be.PutUint64(r[28:], 1<<62) // maxfilesize
	be.PutUint32(r[36:], 0)     // time_delta: 1 ns
	be.PutUint32(r[40:], 1)
	be.PutUint32(r[44:], 0x8) // FSF3_HOMOGENEOUS; no links, no settable times
	return b
}
