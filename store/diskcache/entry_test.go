package diskcache

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
)

// entryFile is the whole file encode describes.
func entryFile(t testing.TB, h header, data []byte) []byte {
	head, err := encode(h, data)
	if err != nil {
		t.Fatal(err)
	}
	return append(head, data...)
}

func TestEntryRoundTrip(t *testing.T) {
	h := header{Store: "s", Key: "a/0", Range: "a", Size: 3, ETag: `"x"`, ModTime: 12}
	b := entryFile(t, h, []byte("abc"))
	e, err := decode(b, "s", "a/0", "a")
	if err != nil || string(e.data) != "abc" || e.ETag != `"x"` || e.info().Size != 3 || e.info().ModTime.UnixNano() != 12 {
		t.Fatalf("decode = %+v, %v", e, err)
	}
	for _, c := range []struct{ id, key, rng string }{{"t", "a/0", "a"}, {"s", "a/1", "a"}, {"s", "a/0", "r0-1"}} {
		if _, err := decode(b, c.id, c.key, c.rng); !errors.Is(err, errCorrupt) {
			t.Errorf("decode as %v: %v; want errCorrupt", c, err)
		}
	}
}

// FuzzDecode: decode of any bytes returns an entry whose data is what its
// header says, or errCorrupt; never a panic.
func FuzzDecode(f *testing.F) {
	valid := entryFile(f, header{Store: "s", Key: "k", Range: "a", Size: 4}, []byte("data"))
	f.Add(valid)
	f.Add(valid[:len(valid)-1])
	f.Add(valid[:headSize])
	f.Add([]byte{})
	f.Add([]byte(magic))
	huge := bytes.Clone(valid)
	binary.LittleEndian.PutUint32(huge[8:], 0xffffffff)
	f.Add(huge)
	// A header that is not JSON, with a right checksum.
	bad := entryFile(f, header{Store: "s", Key: "k", Range: "a"}, nil)
	copy(bad[headSize:], "{{{{")
	f.Add(bad)
	// Len lying about the data, with a right checksum.
	f.Add(entryFile(f, header{Store: "s", Key: "k", Range: "a"}, []byte("x"))[:headSize+40])
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := decode(b, "s", "k", "a")
		if err != nil {
			if !errors.Is(err, errCorrupt) {
				t.Fatalf("error %v is not errCorrupt", err)
			}
			return
		}
		if int64(len(e.data)) != e.Len || e.Store != "s" || e.Key != "k" || e.Range != "a" {
			t.Fatalf("decoded %+v with %d bytes", e.header, len(e.data))
		}
	})
}
