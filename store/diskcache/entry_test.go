package diskcache

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// loadBytes writes b as an entry file in c's folder and reads it back as
// the entry of (id, key, rng) the way a read does (loadInto): nil when it
// is not one to serve.
func loadBytes(t testing.TB, c *Cache, b []byte, id, key, rng string) *entry {
	path := filepath.Join(c.root, "entry")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return c.load(path, id, key, rng)
}

// openBare opens a cache on a new folder, for loadBytes.
func openBare(t testing.TB, dir string) *Cache {
	c, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	<-c.scanned
	return c
}

// entryFile is the whole file encode describes.
func entryFile(t testing.TB, h header, data []byte) []byte {
	head, err := encode(h, data)
	if err != nil {
		t.Fatal(err)
	}
	return append(head, data...)
}

func TestEntryRoundTrip(t *testing.T) {
	c := openBare(t, t.TempDir())
	h := header{Store: "s", Key: "a/0", Range: "a", Size: 3, ETag: `"x"`, ModTime: 12}
	b := entryFile(t, h, []byte("abc"))
	e := loadBytes(t, c, b, "s", "a/0", "a")
	if e == nil || string(e.data) != "abc" || e.ETag != `"x"` || e.info().Size != 3 || e.info().ModTime.UnixNano() != 12 {
		t.Fatalf("load = %+v", e)
	}
	for _, k := range []struct{ id, key, rng string }{{"t", "a/0", "a"}, {"s", "a/1", "a"}, {"s", "a/0", "r0-1"}} {
		before := c.Stats().Corrupt
		if e := loadBytes(t, c, b, k.id, k.key, k.rng); e != nil || c.Stats().Corrupt != before+1 {
			t.Errorf("load as %v: %+v, %d found damaged; want none, one more damaged", k, e, c.Stats().Corrupt-before)
		}
	}
}

// FuzzLoad: an entry file of any bytes is read (loadInto) as an entry
// whose data is what its header says, or as none (counted damaged); never
// a panic.
func FuzzLoad(f *testing.F) {
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
	// Data past the first read of the file (headRead).
	f.Add(entryFile(f, header{Store: "s", Key: "k", Range: "a"}, bytes.Repeat([]byte("z"), 2*headRead)))
	c := openBare(f, f.TempDir())
	f.Fuzz(func(t *testing.T, b []byte) {
		e := loadBytes(t, c, b, "s", "k", "a")
		if e != nil && (int64(len(e.data)) != e.Len || e.Store != "s" || e.Key != "k" || e.Range != "a") {
			t.Fatalf("loaded %+v with %d bytes", e.header, len(e.data))
		}
	})
}
