package zip

import (
	archivezip "archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store"
)

// readsAt is an io.ReaderAt over b that counts its reads and the reads
// that reach outside b.
type readsAt struct {
	b       []byte
	reads   atomic.Int64
	outside atomic.Int64
}

func (r *readsAt) ReadAt(p []byte, off int64) (int, error) {
	r.reads.Add(1)
	if off < 0 || off+int64(len(p)) > int64(len(r.b)) {
		r.outside.Add(1)
	}
	return bytes.NewReader(r.b).ReadAt(p, off)
}

// rawMember is a Stored member of an archive written by rawZip, with its
// own extra fields in the local header and in the central directory.
type rawMember struct {
	name           string
	data           []byte
	local, central []byte // extra fields
}

// rawZip writes the members into an archive byte by byte, so that a local
// header can differ from its central directory entry as some writers make
// them (archive/zip's Writer writes the same extra field in both).
func rawZip(members ...rawMember) []byte {
	var out, cd []byte
	le := binary.LittleEndian
	for _, m := range members {
		crc, n := crc32.ChecksumIEEE(m.data), uint32(len(m.data))
		off := uint32(len(out))
		out = le.AppendUint32(out, 0x04034b50)
		out = le.AppendUint16(out, 20) // version needed
		out = le.AppendUint16(out, 0)  // flags
		out = le.AppendUint16(out, 0)  // Stored
		out = le.AppendUint32(out, 0)  // time, date
		out = le.AppendUint32(out, crc)
		out = le.AppendUint32(out, n)
		out = le.AppendUint32(out, n)
		out = le.AppendUint16(out, uint16(len(m.name)))
		out = le.AppendUint16(out, uint16(len(m.local)))
		out = append(append(append(out, m.name...), m.local...), m.data...)

		cd = le.AppendUint32(cd, 0x02014b50)
		cd = le.AppendUint16(cd, 20) // version made by
		cd = le.AppendUint16(cd, 20) // version needed
		cd = le.AppendUint16(cd, 0)  // flags
		cd = le.AppendUint16(cd, 0)  // Stored
		cd = le.AppendUint32(cd, 0)  // time, date
		cd = le.AppendUint32(cd, crc)
		cd = le.AppendUint32(cd, n)
		cd = le.AppendUint32(cd, n)
		cd = le.AppendUint16(cd, uint16(len(m.name)))
		cd = le.AppendUint16(cd, uint16(len(m.central)))
		cd = le.AppendUint16(cd, 0) // comment length
		cd = le.AppendUint16(cd, 0) // disk
		cd = le.AppendUint16(cd, 0) // internal attributes
		cd = le.AppendUint32(cd, 0) // external attributes
		cd = le.AppendUint32(cd, off)
		cd = append(append(cd, m.name...), m.central...)
	}
	cdOff := uint32(len(out))
	out = append(out, cd...)
	out = le.AppendUint32(out, 0x06054b50)
	out = le.AppendUint32(out, 0) // disks
	out = le.AppendUint16(out, uint16(len(members)))
	out = le.AppendUint16(out, uint16(len(members)))
	out = le.AppendUint32(out, uint32(len(cd)))
	out = le.AppendUint32(out, cdOff)
	return le.AppendUint16(out, 0) // comment length
}

// extra returns a well-formed extra field of n bytes (n = 0 or ≥ 4): one
// block of an unassigned ID.
func extra(n int) []byte {
	if n == 0 {
		return nil
	}
	b := binary.LittleEndian.AppendUint16(nil, 0x6666)
	b = binary.LittleEndian.AppendUint16(b, uint16(n-4))
	return append(b, make([]byte, n-4)...)
}

// value is a member's contents in these tests: long enough that a read of
// it is not a read of the next header.
var value = bytes.Repeat([]byte("0123456789abcdef"), 300)

// TestReadsPerGet counts the reads of the archive each Get makes: one,
// reading a member's local header with its data, unless the local extra
// field is longer than the central directory foretells (beyond a slack
// that covers Info-ZIP's); later reads of a member read only its data.
func TestReadsPerGet(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		archive []byte
		reads   int64 // by the first Get
	}{
		{"archive/zip's Writer, Stored", build(t, map[string][]byte{"a": []byte("{}"), "k": value, "z": value}, "", CreateOptions{}), 1},
		{"archive/zip's Writer, Deflate", build(t, map[string][]byte{"a": []byte("{}"), "k": value, "z": value}, "", CreateOptions{Deflate: true}), 1},
		{"no extra fields (Python's zipfile)", rawZip(rawMember{name: "k", data: value}, rawMember{name: "z", data: value}), 1},
		{"the same extra field in both", rawZip(rawMember{name: "k", data: value, local: extra(36), central: extra(36)}, rawMember{name: "z", data: value}), 1},
		{"Info-ZIP's extras (local 28 bytes, central 24)", rawZip(rawMember{name: "k", data: value, local: extra(28), central: extra(24)}, rawMember{name: "z", data: value}), 1},
		{"a shorter local extra field", rawZip(rawMember{name: "k", data: value, local: extra(4), central: extra(100)}, rawMember{name: "z", data: value}), 1},
		{"a local extra field 200 bytes longer", rawZip(rawMember{name: "k", data: value, local: extra(220), central: extra(20)}, rawMember{name: "z", data: value}), 2},
		{"a local extra field only", rawZip(rawMember{name: "k", data: value, local: extra(1000)}, rawMember{name: "z", data: value}), 2},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &readsAt{b: c.archive}
			s, err := Open(r, int64(len(c.archive)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			for i, want := range []int64{c.reads, 1} {
				r.reads.Store(0)
				if got, err := s.Get(ctx, "k"); err != nil || !bytes.Equal(got, value) {
					t.Fatalf("Get %d: %.20q…, %v", i+1, got, err)
				}
				if n := r.reads.Load(); n != want {
					t.Errorf("Get %d read the archive %d times; want %d", i+1, n, want)
				}
			}
			// A range of the member: one read of that range (Stored) or of
			// the Deflate stream through a buffer.
			r.reads.Store(0)
			if got, err := s.GetRange(ctx, "k", store.Range(100, 50)); err != nil || !bytes.Equal(got, value[100:150]) {
				t.Fatalf("GetRange(100, 50) = %q, %v", got, err)
			}
			if n := r.reads.Load(); n != 1 {
				t.Errorf("GetRange(100, 50) after a Get read the archive %d times; want 1", n)
			}
			// The first read of a member from its middle reads its header,
			// then the range.
			r.reads.Store(0)
			if got, err := s.GetRange(ctx, "z", store.SuffixRange(10)); err != nil || !bytes.Equal(got, value[len(value)-10:]) {
				t.Fatalf("GetRange(z, last 10) = %q, %v", got, err)
			}
			if n := r.reads.Load(); n != 2 {
				t.Errorf("a first GetRange of the end of a member read the archive %d times; want 2 (header, range)", n)
			}
			if n := r.outside.Load(); n != 0 {
				t.Errorf("%d reads reached outside the archive", n)
			}
		})
	}
}

// TestInfoZIPReadsPerGet reads an archive written by Info-ZIP's zip(1),
// whose local headers hold longer extra fields than its central directory:
// still one read per member.
func TestInfoZIPReadsPerGet(t *testing.T) {
	peertest.NeedCommands(t, "zip", "zip")
	dir := t.TempDir()
	files := map[string][]byte{"zarr.json": []byte(`{"zarr_format": 3, "node_type": "group"}`), "k": value}
	if err := os.Mkdir(filepath.Join(dir, "in"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, "in", name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command("zip", "-q", "-0", "-r", filepath.Join(dir, "x.zip"), ".")
	cmd.Dir = filepath.Join(dir, "in")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("zip: %v\n%s", err, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "x.zip"))
	if err != nil {
		t.Fatal(err)
	}
	r := &readsAt{b: b}
	s, err := Open(r, int64(len(b)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range files {
		r.reads.Store(0)
		if got, err := s.Get(context.Background(), name); err != nil || !bytes.Equal(got, want) {
			t.Fatalf("Get(%q) = %.20q…, %v", name, got, err)
		}
		if n := r.reads.Load(); n != 1 {
			t.Errorf("Get(%q) read the archive %d times; want 1", name, n)
		}
	}
}

// TestHostileLocalHeaders reads members whose local header does not fit
// the central directory: each Get fails with archive/zip's ErrFormat (or
// ErrChecksum when the data moved within the archive), without reading
// outside the archive.
func TestHostileLocalHeaders(t *testing.T) {
	le := binary.LittleEndian
	// A zip64 extra field holding only the local header's offset, which
	// the central entry's own field then says to find there.
	zip64 := le.AppendUint16(le.AppendUint16(nil, 1), 8)
	zip64 = le.AppendUint64(zip64, 1<<63+5)
	good := rawZip(rawMember{name: "k", data: value, central: zip64})
	cd := bytes.Index(good, []byte("PK\x01\x02"))
	le.PutUint32(good[cd+42:], 0) // the header's offset, while not zip64
	edit := func(f func(b []byte)) []byte {
		b := bytes.Clone(good)
		f(b)
		return b
	}
	if _, err := Open(bytes.NewReader(good), int64(len(good)), Options{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name    string
		archive []byte
		want    error
	}{
		{"no signature", edit(func(b []byte) { b[0] = 'X' }), archivezip.ErrFormat},
		{"extra field past the end", edit(func(b []byte) { le.PutUint16(b[28:], 0xffff) }), archivezip.ErrFormat},
		{"name and extra past the end", edit(func(b []byte) { le.PutUint16(b[26:], 0xffff); le.PutUint16(b[28:], 0xffff) }), archivezip.ErrFormat},
		{"data moved by a longer extra field", edit(func(b []byte) { le.PutUint16(b[28:], 10) }), archivezip.ErrChecksum},
		{"header offset at the central directory", edit(func(b []byte) { le.PutUint32(b[cd+42:], uint32(cd)) }), archivezip.ErrFormat},
		{"header offset 10 bytes before the end", edit(func(b []byte) { le.PutUint32(b[cd+42:], uint32(len(b)-10)) }), archivezip.ErrFormat},
		{"header offset past the end", edit(func(b []byte) { le.PutUint32(b[cd+42:], 0xfffffff0) }), archivezip.ErrFormat},
		{"zip64 header offset past 2⁶³", edit(func(b []byte) { le.PutUint32(b[cd+42:], 0xffffffff) }), archivezip.ErrFormat},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := &readsAt{b: c.archive}
			s, err := Open(r, int64(len(c.archive)), Options{})
			if err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(context.Background(), "k")
			t.Logf("Get: %v", err)
			if !errors.Is(err, c.want) {
				t.Errorf("Get = %.20q…, %v; want %v", got, err, c.want)
			}
			if _, err := s.GetRange(context.Background(), "k", store.Range(1, 2)); err == nil && c.want == archivezip.ErrFormat {
				t.Error("GetRange succeeded")
			}
			if n := r.outside.Load(); n != 0 {
				t.Errorf("%d reads reached outside the archive", n)
			}
		})
	}
}

// FuzzLocalHeader reads member "k" of an archive whose central directory
// is valid and whose local header and data are arbitrary bytes: no panic,
// no read outside the archive, and what Get returns archive/zip's reader
// returns too.
func FuzzLocalHeader(f *testing.F) {
	good := rawZip(rawMember{name: "k", data: []byte("hello")})
	f.Add(good[:bytes.Index(good, []byte("PK\x01\x02"))], uint32(5), uint32(0))
	f.Add(rawZip(rawMember{name: "k", data: []byte("hello"), local: extra(300)})[:30+1+300+5], uint32(5), uint32(0))
	f.Add([]byte("PK\x03\x04"), uint32(0), uint32(0))
	f.Fuzz(func(t *testing.T, local []byte, size, off uint32) {
		if len(local) > 1<<16 {
			return
		}
		data := []byte("hello")
		if int(size) < len(data) {
			data = data[:size]
		}
		b := rawZip(rawMember{name: "k", data: data})
		cd := bytes.Index(b, []byte("PK\x01\x02"))
		b = append(bytes.Clone(local), b[cd:]...)
		cd = len(local)
		le := binary.LittleEndian
		le.PutUint32(b[cd+20:], size)
		le.PutUint32(b[cd+24:], size)
		le.PutUint32(b[cd+42:], off)
		le.PutUint32(b[len(b)-6:], uint32(cd))
		r := &readsAt{b: b}
		s, err := Open(r, int64(len(b)), Options{ExactRoot: true})
		if err != nil {
			return
		}
		ctx := context.Background()
		got, err := s.Get(ctx, "k")
		if tail, terr := s.GetRange(ctx, "k", store.SuffixRange(2)); err == nil && (terr != nil || !bytes.Equal(tail, got[max(0, len(got)-2):])) {
			t.Fatalf("GetRange(last 2) = %q, %v; Get has %q", tail, terr, got)
		}
		if n := r.outside.Load(); n != 0 {
			t.Fatalf("%d reads reached outside the archive", n)
		}
		if err != nil {
			return
		}
		zr, zerr := archivezip.NewReader(bytes.NewReader(b), int64(len(b)))
		if zerr != nil {
			t.Fatalf("Get = %q, but archive/zip does not open the archive: %v", got, zerr)
		}
		rc, zerr := zr.File[0].Open()
		if zerr != nil {
			t.Fatalf("Get = %q, but archive/zip does not open the member: %v", got, zerr)
		}
		want, zerr := io.ReadAll(rc)
		if zerr != nil || !bytes.Equal(got, want) {
			t.Fatalf("Get = %q; archive/zip reads %q, %v", got, want, zerr)
		}
	})
}
