package codec

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// TestPeerBase64: numcodecs.Base64 encodes int32 values; Base64 decodes
// them to the values NumPy wrote, and encodes them back to the same text.
func TestPeerBase64(t *testing.T) {
	peertest.NeedPython(t)
	out := peertest.Oracle(t, "codec/peer_base64.py")
	raw, enc := out[:4000], out[4000:]
	if binary.LittleEndian.Uint32(raw[4:]) != 7919 {
		t.Fatalf("unexpected NumPy output")
	}
	c, err := New("base64", nil)
	if err != nil {
		t.Fatal(err)
	}
	b := c.(BytesToBytes)
	got, err := b.Decode(enc, len(raw))
	if err != nil || !bytes.Equal(got, raw) {
		t.Fatalf("Decode: %v", err)
	}
	if back, _ := b.Encode(raw); !bytes.Equal(back, enc) {
		t.Errorf("Encode differs from numcodecs")
	}
	for _, bad := range [][]byte{[]byte("AAA"), []byte("A=AA"), []byte("@@@@")} {
		if _, err := b.Decode(bad, -1); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Decode(%q): %v, want ErrCorrupt", bad, err)
		}
	}
	if _, err := b.Decode([]byte("AAAA"), 4); !errors.Is(err, ErrCorrupt) {
		t.Errorf("3 bytes for 4: %v", err)
	}
}

// FuzzBase64 decodes arbitrary text: an error or exactly the size asked.
func FuzzBase64(f *testing.F) {
	f.Add([]byte("AAECAw=="), 4)
	f.Add([]byte("====\n"), -1)
	f.Fuzz(func(t *testing.T, data []byte, size int) {
		out, err := Base64{}.Decode(data, size)
		if err == nil && size >= 0 && len(out) != size {
			t.Fatalf("decoded %d bytes, want %d", len(out), size)
		}
	})
}
