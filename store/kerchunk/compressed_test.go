package kerchunk

import (
	"bytes"
	"compress/gzip"
	"errors"
	"testing"
)

// TestDecompressBound: Decompress stops at its bound (a gzip bomb, a
// zstd frame, a bzip2 stream) with ErrTooLarge.
func TestDecompressBound(t *testing.T) {
	var gz bytes.Buffer
	w, _ := gzip.NewWriterLevel(&gz, gzip.BestCompression)
	w.Write([]byte("{"))
	w.Write(make([]byte, 1<<22))
	w.Close()
	if gz.Len() > 8<<10 {
		t.Fatalf("bomb of %d bytes", gz.Len())
	}
	if _, err := Decompress(gz.Bytes(), 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Errorf("4 MiB out of %d bytes under a 1 MiB bound: %v", gz.Len(), err)
	}
	if b, err := Decompress(gz.Bytes(), 1<<23); err != nil || len(b) != 1<<22+1 {
		t.Errorf("within the bound: %d bytes, %v", len(b), err)
	}
	if h := Head(gz.Bytes(), 16); string(h) != "{"+string(make([]byte, 15)) {
		t.Errorf("Head = %q", h)
	}
	if _, err := Decompress(gz.Bytes()[:gz.Len()/2], 1<<23); err == nil {
		t.Errorf("a truncated gzip decompressed")
	}
}

func FuzzDecompress(f *testing.F) {
	var gz bytes.Buffer
	w := gzip.NewWriter(&gz)
	w.Write([]byte(`{"a": "b"}`))
	w.Close()
	f.Add(gz.Bytes())
	f.Add(gz.Bytes()[:5])
	f.Add([]byte("BZh91AY&SY"))
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x58, 0, 0})
	f.Add([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x00, 0x00, 0x00, 0x00, 0xf8}) // a huge window
	f.Add([]byte{0xfd, '7', 'z', 'X', 'Z', 0, 0, 4})
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := Decompress(data, 1<<16)
		if err == nil && len(b) > 1<<16 {
			t.Fatalf("%d bytes out under a bound of %d", len(b), 1<<16)
		}
		if h := Head(data, 16); len(h) > 16 {
			t.Fatalf("Head gave %d bytes", len(h))
		}
	})
}
