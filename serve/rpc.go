package serve

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
)

// This file sits between the network and go-nfs, one ONC RPC record
// (RFC 5531) at a time. go-nfs v0.0.4 answers only MOUNT's NULL, MNT and
// UMNT: a client asking for EXPORT (showmount -e, libnfs before every
// mount), DUMP or UMNTALL gets "procedure unavailable", and libnfs then
// gives up. rpcConn answers those three itself, and NFS's READ and
// FSINFO (nfsread.go: the fast path). It also joins records sent
// in several fragments (go-nfs reads only single-fragment ones), refuses
// records over maxRecord, and caps the count of a READ at maxReadCount,
// since go-nfs allocates the count a client asks for (up to 16 MiB) before
// reading.

// ONC RPC program and procedure numbers.
const (
	progNFS   = 100003
	progMount = 100005

	mountProcDump    = 2
	mountProcUmntAll = 4
	mountProcExport  = 5

	nfsProcRead = 6
)

// maxRecord bounds one request: the largest a read-only server needs
// (a WRITE of 1 MiB, which it refuses, with its header).
const maxRecord = 1<<20 + 64<<10

// maxReadCount is the most bytes one READ returns (the Linux client's
// largest rsize).
const maxReadCount = 1 << 20

// errRecordTooLarge closes a connection whose request is over maxRecord.
var errRecordTooLarge = errors.New("serve: RPC record too large")

// rpcListener wraps the connections it accepts in rpcConns.
type rpcListener struct {
	net.Listener
	s *NFS
}

func (l *rpcListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	rc := &rpcConn{Conn: c, r: bufio.NewReaderSize(c, 64<<10), s: l.s}
	if !l.s.track(rc, true) {
		c.Close()
		return nil, net.ErrClosed
	}
	return rc, nil
}

// rpcConn is a client's connection as go-nfs sees it: the requests it
// should answer, each as one record, and the replies it writes, between
// which the replies of rpcConn's own go.
type rpcConn struct {
	net.Conn
	r *bufio.Reader
	s *NFS

	in []byte // what is left of the record being given to go-nfs

	wmu    sync.Mutex
	wleft  int64    // bytes left of the reply go-nfs is writing
	whdr   []byte   // the bytes of a reply's record mark seen so far
	queued [][]byte // own replies waiting for go-nfs's reply to end
	closed sync.Once
}

func (c *rpcConn) Close() error {
	var err error
	c.closed.Do(func() {
		c.s.track(c, false)
		err = c.Conn.Close()
	})
	return err
}

// Read gives go-nfs the next request it is to answer.
func (c *rpcConn) Read(p []byte) (int, error) {
	for len(c.in) == 0 {
		rec, err := c.readRecord()
		if err != nil {
			c.Close() // go-nfs closes only on EOF
			return 0, err
		}
		reply := c.s.h.fastNFS(rec)
		if reply == nil {
			reply = c.answer(rec)
		}
		if reply != nil {
			sent, err := c.send(reply)
			if err != nil {
				c.Close()
				return 0, err
			}
			if sent {
				putReply(reply)
			}
			continue
		}
		c.in = make([]byte, 4+len(rec))
		binary.BigEndian.PutUint32(c.in, 1<<31|uint32(len(rec)))
		copy(c.in[4:], rec)
	}
	n := copy(p, c.in)
	c.in = c.in[n:]
	return n, nil
}

// readRecord reads one record, joining its fragments.
func (c *rpcConn) readRecord() ([]byte, error) {
	var rec []byte
	for {
		var mark [4]byte
		if _, err := io.ReadFull(c.r, mark[:]); err != nil {
			if len(rec) > 0 && errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		v := binary.BigEndian.Uint32(mark[:])
		n := int(v &^ (1 << 31))
		if len(rec)+n > maxRecord {
			return nil, errRecordTooLarge
		}
		start := len(rec)
		rec = append(rec, make([]byte, n)...)
		if _, err := io.ReadFull(c.r, rec[start:]); err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
		if v&(1<<31) != 0 {
			return rec, nil
		}
	}
}

// callHeader returns a call's program and procedure, and the offset of
// its arguments; ok is false for anything that is not a well-formed call
// (go-nfs then answers or refuses it).
func callHeader(rec []byte) (prog, proc uint32, args int, ok bool) {
	be := binary.BigEndian
	if len(rec) < 24 || be.Uint32(rec[4:]) != 0 || be.Uint32(rec[8:]) != 2 {
		return 0, 0, 0, false
	}
	prog, proc = be.Uint32(rec[12:]), be.Uint32(rec[20:])
	off := 24
	for range 2 { // the credential and the verifier
		if len(rec) < off+8 {
			return 0, 0, 0, false
		}
		n := int(be.Uint32(rec[off+4:]))
		if n > 400 {
			return 0, 0, 0, false
		}
		off += 8 + (n+3)&^3
	}
	if off > len(rec) {
		return 0, 0, 0, false
	}
	return prog, proc, off, true
}

// answer returns rpcConn's own reply to the call rec, or nil for go-nfs
// to answer it. It caps a READ's count in rec.
func (c *rpcConn) answer(rec []byte) []byte {
	prog, proc, args, ok := callHeader(rec)
	if !ok {
		return nil
	}
	be := binary.BigEndian
	switch {
	case prog == progNFS && proc == nfsProcRead:
		// READ3args: a file handle (opaque<64>), offset, count.
		if len(rec) < args+4 {
			return nil
		}
		n := int(be.Uint32(rec[args:]))
		at := args + 4 + (n+3)&^3 + 8
		if n <= 64 && len(rec) >= at+4 && be.Uint32(rec[at:]) > maxReadCount {
			be.PutUint32(rec[at:], maxReadCount)
		}
		return nil
	case prog != progMount:
		return nil
	}
	var body []uint32
	switch proc {
	case mountProcExport:
		// exports: one entry, "/", with no groups (everyone), then the
		// end of the list.
		body = []uint32{1, 1, uint32('/') << 24, 0, 0}
	case mountProcDump:
		body = []uint32{0} // no mounts are recorded
	case mountProcUmntAll:
		// void
	default:
		return nil
	}
	reply := make([]byte, 4+24+4*len(body))
	be.PutUint32(reply, 1<<31|uint32(len(reply)-4))
	copy(reply[4:], rec[:4])   // xid
	be.PutUint32(reply[8:], 1) // REPLY
	// MSG_ACCEPTED, a null verifier, SUCCESS: all zero.
	for i, v := range body {
		be.PutUint32(reply[28+4*i:], v)
	}
	return reply
}

// send writes one of rpcConn's own replies, at once if go-nfs is not in
// the middle of one of its own (sent), else once it ends.
func (c *rpcConn) send(reply []byte) (sent bool, err error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if c.wleft == 0 && len(c.whdr) == 0 {
		_, err := c.Conn.Write(reply)
		return true, err
	}
	if len(c.queued) >= 64 {
		return false, fmt.Errorf("rpc: %d replies waiting", len(c.queued))
	}
	c.queued = append(c.queued, reply)
	return false, nil
}

// Write writes go-nfs's replies, following their record marks so that
// rpcConn's own go between them.
func (c *rpcConn) Write(p []byte) (int, error) {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for q := p; len(q) > 0; {
		if c.wleft == 0 {
			k := min(4-len(c.whdr), len(q))
			c.whdr = append(c.whdr, q[:k]...)
			q = q[k:]
			if len(c.whdr) == 4 {
				c.wleft = int64(binary.BigEndian.Uint32(c.whdr) &^ (1 << 31))
				c.whdr = c.whdr[:0]
			}
			continue
		}
		k := min(c.wleft, int64(len(q)))
		c.wleft -= k
		q = q[k:]
	}
	n, err := c.Conn.Write(p)
	if err != nil {
		return n, err
	}
	if c.wleft == 0 && len(c.whdr) == 0 {
		for _, r := range c.queued {
			if _, err := c.Conn.Write(r); err != nil {
				return n, err
			}
		}
		c.queued = c.queued[:0]
	}
	return n, nil
}
