package serve

import (
	"bytes"
	"context"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	nfs "github.com/willscott/go-nfs"
)

// nfsRaw sends NFSv3 calls on its own connection and returns the replies'
// bodies (after the accepted-reply header).
type nfsRaw struct {
	t   *testing.T
	c   net.Conn
	xid uint32
}

func (r *nfsRaw) call(proc uint32, args []byte) []byte {
	r.t.Helper()
	r.xid++
	var rec []byte
	for _, v := range []uint32{r.xid, 0, 2, progNFS, nfsVers, proc, 0, 0, 0, 0} {
		rec = binary.BigEndian.AppendUint32(rec, v)
	}
	rec = append(rec, args...)
	if _, err := r.c.Write(append(binary.BigEndian.AppendUint32(nil, 1<<31|uint32(len(rec))), rec...)); err != nil {
		r.t.Fatal(err)
	}
	var mark [4]byte
	if _, err := io.ReadFull(r.c, mark[:]); err != nil {
		r.t.Fatal(err)
	}
	rep := make([]byte, binary.BigEndian.Uint32(mark[:])&^(1<<31))
	if _, err := io.ReadFull(r.c, rep); err != nil {
		r.t.Fatal(err)
	}
	if len(rep) < 24 || binary.BigEndian.Uint32(rep) != r.xid || binary.BigEndian.Uint32(rep[20:]) != 0 {
		r.t.Fatalf("not a successful reply to %d: %x", r.xid, rep[:min(len(rep), 32)])
	}
	return rep[24:]
}

// readArgs are READ3args.
func readArgs(fh []byte, off uint64, count uint32) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(fh)))
	b = append(b, fh...)
	b = append(b, make([]byte, (4-len(fh)%4)%4)...)
	b = binary.BigEndian.AppendUint64(b, off)
	return binary.BigEndian.AppendUint32(b, count)
}

// The fast READ path (rpcConn, not go-nfs) returns the view's bytes with
// the attributes go-nfs would give, says EOF at and past the end, caps the
// count at what FSINFO advertises, and refuses handles it did not give.
func TestNFSFastRead(t *testing.T) {
	addr, tr := startNFS(t)
	_, tg, err := nfsMount(t, addr, "/")
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	r := &nfsRaw{t: t, c: c}
	var attrs bytes.Buffer // of the file being read
	// read answers READ of count at off: status, data, eof.
	read := func(fh []byte, off uint64, count uint32) (uint32, []byte, bool) {
		t.Helper()
		rep := r.call(nfsProcRead, readArgs(fh, off, count))
		st := binary.BigEndian.Uint32(rep)
		if st != nfs3OK {
			if len(rep) != 8 || binary.BigEndian.Uint32(rep[4:]) != 0 {
				t.Errorf("READ failed with %d and not with absent attributes: %x", st, rep)
			}
			return st, nil, false
		}
		if !bytes.Equal(rep[4:4+attrs.Len()], attrs.Bytes()) {
			t.Errorf("READ attributes %x, go-nfs's %x", rep[4:4+attrs.Len()], attrs.Bytes())
		}
		rep = rep[4+attrs.Len():]
		k, eof, k2 := binary.BigEndian.Uint32(rep), binary.BigEndian.Uint32(rep[4:]), binary.BigEndian.Uint32(rep[8:])
		if k != k2 || len(rep) != 12+int(k+3)&^3 {
			t.Fatalf("READ reply of %d bytes says %d and %d", len(rep), k, k2)
		}
		return st, rep[12 : 12+k], eof == 1
	}

	// lat/data is small; dataset.nc is over maxReadCount.
	var fh []byte
	for _, p := range []string{"lat/data", "dataset.nc"} {
		_, fh, err = tg.Lookup("/" + p)
		if err != nil {
			t.Fatal(err)
		}
		n, err := tr.Resolve(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		size := n.Size(context.Background())
		want := make([]byte, size)
		if k, err := n.File.ReadAt(context.Background(), want, 0); k != len(want) {
			t.Fatalf("view read %s: %d of %d: %v", p, k, size, err)
		}
		attrs.Reset()
		nfs.WritePostOpAttrs(&attrs, nfs.ToFileAttribute(&nfsInfo{n: n, t: tr}, n.Path))

		// FSINFO: rtmax and rtpref are what READ honours.
		fi := r.call(nfsProcFSInfo, readArgs(fh, 0, 0)[:4+len(fh)])
		if len(fi) != 4+len(attrs.Bytes())+48 || binary.BigEndian.Uint32(fi) != nfs3OK {
			t.Fatalf("FSINFO: %x", fi)
		}
		fi = fi[4+attrs.Len():]
		if rtmax, rtpref := binary.BigEndian.Uint32(fi), binary.BigEndian.Uint32(fi[4:]); rtmax != maxReadCount || rtpref != maxReadCount {
			t.Errorf("FSINFO rtmax %d, rtpref %d; want %d", rtmax, rtpref, maxReadCount)
		}

		tests := []struct {
			name    string
			off     uint64
			count   uint32
			wantOff int64 // the bytes want[wantOff:wantEnd]
			wantEnd int64
			wantEOF bool
		}{
			{"start", 0, 7, 0, 7, size <= 7},
			{"middle", 3, 10, 3, min(13, size), size <= 13},
			{"to the end", 1, uint32(size - 1), 1, min(size, 1+maxReadCount), size-1 <= maxReadCount},
			{"past the end", uint64(size) + 100, 10, size, size, true},
			{"at the end", uint64(size), 10, size, size, true},
			{"huge offset", 1 << 62, 10, size, size, true},
			{"zero count", 0, 0, 0, 0, size == 0},
			{"count over rtmax", 0, 1 << 30, 0, min(size, maxReadCount), size <= maxReadCount},
		}
		for _, tc := range tests {
			st, got, eof := read(fh, tc.off, tc.count)
			if st != nfs3OK || !bytes.Equal(got, want[tc.wantOff:tc.wantEnd]) || eof != tc.wantEOF {
				t.Errorf("%s: status %d, %d bytes (eof %v); want %d bytes (eof %v)", tc.name, st, len(got), eof, tc.wantEnd-tc.wantOff, tc.wantEOF)
			}
		}
		// The whole file in the pieces a client reads.
		var all []byte
		for off := uint64(0); ; {
			_, got, eof := read(fh, off, uint32(max(size/7, 5)))
			all = append(all, got...)
			off += uint64(len(got))
			if eof {
				break
			}
		}
		if !bytes.Equal(all, want) {
			t.Errorf("read in pieces: %d bytes differ from the view's %d", len(all), len(want))
		}

	}
	stale := append([]byte(nil), fh...)
	stale[0] ^= 0xff
	for _, tc := range []struct {
		name string
		fh   []byte
		want uint32
	}{
		{"unknown handle", stale, nfs3ErrStale},
		{"short handle", fh[:8], nfs3ErrBadFH},
		{"empty handle", nil, nfs3ErrBadFH},
		{"long handle", make([]byte, 64), nfs3ErrBadFH},
	} {
		if st, _, _ := read(tc.fh, 0, 10); st != tc.want {
			t.Errorf("READ of %s: status %d, want %d", tc.name, st, tc.want)
		}
	}
	// Truncated arguments: INVAL, and the connection serves on.
	if rep := r.call(nfsProcRead, readArgs(fh, 0, 1)[:6]); binary.BigEndian.Uint32(rep) != nfs3ErrInval {
		t.Errorf("READ of truncated arguments: %x", rep)
	}
	if st, got, _ := read(fh, 0, 1); st != nfs3OK || len(got) != 1 {
		t.Errorf("after bad calls: status %d, %x", st, got)
	}
}
