package serve

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	nfsc "github.com/willscott/go-nfs-client/nfs"
	"github.com/willscott/go-nfs-client/nfs/rpc"
	"github.com/willscott/go-nfs-client/nfs/xdr"
)

// startNFS serves the example tree over NFS on a free loopback port.
func startNFS(t *testing.T) (string, *Tree) {
	t.Helper()
	tr, _ := exampleTree(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := NewNFS(tr)
	done := make(chan error, 1)
	go func() { done <- s.Serve(ln) }()
	t.Cleanup(func() {
		s.Close()
		if err := <-done; !errors.Is(err, net.ErrClosed) {
			t.Errorf("Serve after Close: %v", err)
		}
	})
	return ln.Addr().String(), tr
}

// nfsMount mounts dir of the server at addr with go-nfs-client.
func nfsMount(t *testing.T, addr, dir string) (*nfsc.Mount, *nfsc.Target, error) {
	t.Helper()
	// go-nfs-client binds a local port it picks at random: retry when
	// it picks one in use.
	c, err := rpc.DialTCP("tcp", addr, false)
	for i := 0; err != nil && strings.Contains(err.Error(), "address already in use") && i < 20; i++ {
		c, err = rpc.DialTCP("tcp", addr, false)
	}
	if err != nil {
		t.Fatal(err)
	}
	m := &nfsc.Mount{Client: c}
	t.Cleanup(c.Close)
	tg, err := m.Mount(dir, rpc.AuthNull)
	return m, tg, err
}

// nfsEnd reads the tree through go-nfs-client: READDIRPLUS and READ.
type nfsEnd struct{ tg *nfsc.Target }

func (n nfsEnd) list(t *testing.T, p string) []entry {
	es, err := n.tg.ReadDirPlus("/" + p)
	if err != nil {
		t.Fatalf("readdirplus %s: %v", p, err)
	}
	var out []entry
	for _, e := range es {
		if e.FileName == "." || e.FileName == ".." {
			continue
		}
		q := strings.TrimPrefix(p+"/"+e.FileName, "/")
		if e.IsDir() {
			out = append(out, entry{path: q, dir: true})
		} else {
			out = append(out, entry{path: q, size: e.Size()})
		}
	}
	return out
}

func (n nfsEnd) read(t *testing.T, p string) []byte {
	f, err := n.tg.Open("/" + p)
	if err != nil {
		t.Fatalf("open %s: %v", p, err)
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatalf("read %s: %v", p, err)
	}
	return b
}

// Every file and directory the mount shows is listed over NFS with its
// size, and read byte for byte.
func TestNFSShowsTheTree(t *testing.T) {
	addr, tr := startNFS(t)
	_, tg, err := nfsMount(t, addr, "/")
	if err != nil {
		t.Fatal(err)
	}
	checkSameTree(t, nfsEnd{tg}, tr.t.Current().H)
}

// mountCall calls MOUNT procedure proc (v3) and returns its reply.
func mountCall(t *testing.T, m *nfsc.Mount, proc uint32) io.ReadSeeker {
	t.Helper()
	r, err := m.Call(&struct{ rpc.Header }{rpc.Header{Rpcvers: 2, Prog: nfsc.MountProg, Vers: nfsc.MountVers, Proc: proc, Cred: rpc.AuthNull, Verf: rpc.AuthNull}})
	if err != nil {
		t.Fatalf("MOUNT procedure %d: %v", proc, err)
	}
	return r
}

// Every MOUNT procedure is answered; MNT of any directory of the tree
// returns it, and of anything else the error a client expects.
func TestNFSMountProcedures(t *testing.T) {
	addr, _ := startNFS(t)
	m, _, err := nfsMount(t, addr, "/")
	if err != nil {
		t.Fatal(err)
	}
	r := mountCall(t, m, mountProcExport)
	if more, _ := xdr.ReadUint32(r); more != 1 {
		t.Fatal("EXPORT: an empty list")
	}
	if dir, _ := xdr.ReadOpaque(r); string(dir) != "/" {
		t.Errorf("EXPORT: %q, want /", dir)
	}
	groups, _ := xdr.ReadUint32(r)
	more, err := xdr.ReadUint32(r)
	if groups != 0 || more != 0 || err != nil {
		t.Errorf("EXPORT: groups %d, more %d, %v", groups, more, err)
	}
	if n, err := xdr.ReadUint32(mountCall(t, m, mountProcDump)); n != 0 || err != nil {
		t.Errorf("DUMP: %d, %v", n, err)
	}
	mountCall(t, m, mountProcUmntAll)
	mountCall(t, m, 0) // NULL

	for _, c := range []struct {
		dir, err string
		file     string // a file the mount shows at its top
	}{
		{dir: "/temperature", file: "data.npy"},
		{dir: "/codecs/zstd/", file: "zarr.json"},
		{dir: "/temperature/data", err: "MNT3ERR_NOTDIR"},
		{dir: "/nope", err: "MNT3ERR_NOENT"},
		{dir: "/temperature/../lat", err: "unknown mount stat: 22"},
	} {
		_, tg, err := nfsMount(t, addr, c.dir)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("MNT %s: %v, want %s", c.dir, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("MNT %s: %v", c.dir, err)
			continue
		}
		if _, _, err := tg.Lookup("/" + c.file); err != nil {
			t.Errorf("MNT %s, then LOOKUP %s: %v", c.dir, c.file, err)
		}
	}
}

// Every procedure that would change the tree answers NFS3ERR_ROFS (or, for
// names that are not there, NOENT) and changes nothing; handles stay valid.
func TestNFSReadOnly(t *testing.T) {
	addr, _ := startNFS(t)
	_, tg, err := nfsMount(t, addr, "/")
	if err != nil {
		t.Fatal(err)
	}
	_, fh, err := tg.Lookup("/lat/data")
	if err != nil {
		t.Fatal(err)
	}
	rofs := func(what string, err error) {
		t.Helper()
		if err == nil || !strings.Contains(err.Error(), "NFS3ERR_ROFS") {
			t.Errorf("%s: %v, want NFS3ERR_ROFS", what, err)
		}
	}
	_, err = tg.Create("/new", 0o644)
	rofs("CREATE", err)
	_, err = tg.Mkdir("/newdir", 0o755)
	rofs("MKDIR", err)
	rofs("REMOVE", tg.Remove("/lat/data"))
	rofs("RMDIR", tg.RmDir("/lat"))
	rofs("RENAME", tg.Rename("/lat", "/lat2"))
	rofs("SYMLINK", tg.Symlink("/lat", "/link"))
	_, err = tg.SetAttr(fh, nfsc.Sattr3{Size: nfsc.SetSize{SetIt: true, Size: 0}})
	rofs("SETATTR", err)
	f, err := tg.Open("/lat/data")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.Write([]byte("x"))
	rofs("WRITE", err)
	f.Close()
	// The same handle after all that, and after a second lookup.
	attr, err := tg.GetAttr(fh)
	if err != nil || attr.Filesize != 90*8 {
		t.Errorf("GETATTR of lat/data: %+v, %v", attr, err)
	}
	if _, fh2, err := tg.Lookup("/lat/data", false); err != nil || !bytes.Equal(fh, fh2) {
		t.Errorf("a second LOOKUP gave another handle: %x, %x, %v", fh, fh2, err)
	}
	if _, _, err := tg.Lookup("/new", false); !errors.Is(err, errNotExist(err)) || err == nil {
		t.Errorf("LOOKUP /new after CREATE: %v", err)
	}
}

// errNotExist returns err when it says the name is not there.
func errNotExist(err error) error {
	if err != nil && (strings.Contains(err.Error(), "NOENT") || strings.Contains(err.Error(), "not exist")) {
		return err
	}
	return errors.New("exists")
}

// rpcCall returns a MOUNT NULL call with xid as a record of one fragment
// or split into two.
func rpcCall(xid uint32, split bool) []byte {
	var body []byte
	for _, v := range []uint32{xid, 0, 2, progMount, 3, 0, 0, 0, 0, 0} {
		body = binary.BigEndian.AppendUint32(body, v)
	}
	if !split {
		return append(binary.BigEndian.AppendUint32(nil, 1<<31|uint32(len(body))), body...)
	}
	out := binary.BigEndian.AppendUint32(nil, 12)
	out = append(out, body[:12]...)
	out = binary.BigEndian.AppendUint32(out, 1<<31|uint32(len(body)-12))
	return append(out, body[12:]...)
}

// Records in several fragments are joined; a record over the limit closes
// only its own connection; EXPORT answered between go-nfs's own replies
// keeps every reply whole.
func TestNFSRecords(t *testing.T) {
	addr, _ := startNFS(t)
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	// NULL in two fragments, then EXPORT, then NULL, in one write.
	var req []byte
	req = append(req, rpcCall(1, true)...)
	exp := rpcCall(2, false)
	binary.BigEndian.PutUint32(exp[4+20:], mountProcExport)
	req = append(req, exp...)
	req = append(req, rpcCall(3, false)...)
	if _, err := c.Write(req); err != nil {
		t.Fatal(err)
	}
	seen := map[uint32]int{}
	for range 3 {
		var mark [4]byte
		if _, err := io.ReadFull(c, mark[:]); err != nil {
			t.Fatal(err)
		}
		rec := make([]byte, binary.BigEndian.Uint32(mark[:])&^(1<<31))
		if _, err := io.ReadFull(c, rec); err != nil {
			t.Fatal(err)
		}
		xid := binary.BigEndian.Uint32(rec)
		seen[xid] = len(rec)
		if binary.BigEndian.Uint32(rec[4:]) != 1 || binary.BigEndian.Uint32(rec[20:]) != 0 {
			t.Errorf("reply %d: not a successful reply: %x", xid, rec)
		}
	}
	if len(seen) != 3 || seen[2] != 24+20 {
		t.Errorf("replies by xid (their lengths): %v", seen)
	}

	// Over the limit: this connection is closed, others are served.
	big, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer big.Close()
	big.SetDeadline(time.Now().Add(10 * time.Second))
	big.Write(binary.BigEndian.AppendUint32(nil, 1<<31|uint32(maxRecord+1)))
	big.Write(make([]byte, 4096))
	if _, err := big.Read(make([]byte, 1)); err == nil {
		t.Error("a record over the limit was read")
	}
	if _, tg, err := nfsMount(t, addr, "/"); err != nil {
		t.Fatalf("after a hostile client: %v", err)
	} else if _, _, err := tg.Lookup("/lat/data"); err != nil {
		t.Fatalf("after a hostile client: %v", err)
	}
}
