package codec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// n5Codecs is the n5_default chain of the extension's example, with gzip.
const n5Codecs = `[{"name": "n5_default", "configuration": {"codecs": [{"name": "transpose", "configuration": {"order": [1, 0]}},
	{"name": "bytes", "configuration": {"endian": "big"}}, {"name": "gzip", "configuration": {"level": 1}}]}}]`

// TestPeerN5Default: zarr-python 2.13's N5Store writes an N5 array (int16,
// N5 dimensions [7, 5] in blocks of [3, 2], gzip), one edge block
// rewritten truncated to its part inside the array ([1, 1], as Java N5
// writes edge blocks); each block decodes through n5_default (in N5's
// order of dimensions: "Zarr arrays reading N5 data MUST use a
// /-separated v2 chunk key encoding") to what zarr-python reads there,
// the truncated one padded with the fill value.
func TestPeerN5Default(t *testing.T) {
	peertest.NeedPython(t)
	dir := t.TempDir()
	out := peertest.Oracle(t, "codec/peer_n5_default.py", dir)
	cs, err := ParseCodecList(json.RawMessage(n5Codecs))
	if err != nil {
		t.Fatal(err)
	}
	c := cs[0].(N5Default)
	spec := ArraySpec{Shape: []int{3, 2}, DataType: DataType{Name: "int16", Size: 2}, FillValue: []byte{0, 0}}
	blocks := 0
	for len(out) > 0 {
		n := int(binary.LittleEndian.Uint32(out))
		block, want := out[4:4+n], out[4+n:4+n+12]
		out = out[4+n+12:]
		got, err := c.Decode(block, spec)
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("block %d: % x, %v\nwant % x", blocks, got, err, want)
		}
		blocks++
	}
	if blocks != 9 {
		t.Fatalf("%d blocks", blocks)
	}
	for _, bad := range [][]byte{nil, {0, 1, 0, 2}, {0, 0, 0, 3, 0, 0, 0, 1}, {0, 0, 0, 2, 0, 0, 0, 4, 0, 0, 0, 1}} {
		if _, err := c.Decode(bad, spec); err == nil {
			t.Errorf("Decode(% x): no error", bad)
		} else if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
			t.Errorf("Decode(% x): %v", bad, err)
		}
	}
}

// FuzzN5Default decodes arbitrary blocks: an error or exactly the chunk.
func FuzzN5Default(f *testing.F) {
	f.Add([]byte{0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 1, 0x1f, 0x8b})
	f.Add([]byte{0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0})
	cs, err := ParseCodecList(json.RawMessage(n5Codecs))
	if err != nil {
		f.Fatal(err)
	}
	c := cs[0].(N5Default)
	spec := ArraySpec{Shape: []int{3, 2}, DataType: DataType{Name: "int16", Size: 2}, FillValue: []byte{1, 0}}
	f.Fuzz(func(t *testing.T, block []byte) {
		out, err := c.Decode(block, spec)
		if err == nil && len(out) != spec.ByteSize() {
			t.Fatalf("decoded %d bytes, want %d", len(out), spec.ByteSize())
		}
	})
}
