package zstd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"
	"unsafe"

	"github.com/klauspost/compress/huff0"
)

// TestBitReaderLayout pins the field offsets that huff_amd64.s uses.
func TestBitReaderLayout(t *testing.T) {
	var br bitReader
	got := [...]uintptr{unsafe.Offsetof(br.in), unsafe.Offsetof(br.off), unsafe.Offsetof(br.value),
		unsafe.Offsetof(br.bitsRead), unsafe.Sizeof(br)}
	if got != [...]uintptr{0, 24, 32, 40, 48} {
		t.Fatalf("bitReader offsets in, off, value, bitsRead and size are %v; huff_amd64.s assumes 0, 24, 32, 40, 48", got)
	}
}

// TestHuff4 compresses the samples' first block with klauspost/compress's
// huff0 (four streams, as zstd's literals) and decodes them with
// huff4Prefix (assembly on amd64) and huff4Go, each followed by
// huffRest: both must give back the input, and the prefix must have done
// most of the work.
func TestHuff4(t *testing.T) {
	prefixes := map[string]func(*[1 << huffTableLog]huffEntry, []byte, int, *[4]bitReader) int{
		"huff4Prefix": huff4Prefix, "huff4Go": huff4Go,
	}
	tried := 0
	for name, data := range zstdSamples() {
		lits := data[:min(len(data), zstdMaxBlockSize)]
		if len(lits) < 1024 {
			continue
		}
		var sc huff0.Scratch
		comp, _, err := huff0.Compress4X(lits, &sc)
		if errors.Is(err, huff0.ErrIncompressible) || errors.Is(err, huff0.ErrUseRLE) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: huff0: %v", name, err)
		}
		s := new(zstdState)
		n, err := s.readHuffman(comp)
		if err != nil {
			t.Fatalf("%s: table: %v", name, err)
		}
		jump := comp[n:]
		s1, s2, s3 := int(binary.LittleEndian.Uint16(jump)), int(binary.LittleEndian.Uint16(jump[2:])), int(binary.LittleEndian.Uint16(jump[4:]))
		in := jump[6:]
		streams := [4][]byte{in[:s1], in[s1 : s1+s2], in[s1+s2 : s1+s2+s3], in[s1+s2+s3:]}
		q := (len(lits) + 3) / 4
		tried++
		for pname, prefix := range prefixes {
			var br [4]bitReader
			for k := range br {
				if !br[k].init(streams[k]) {
					t.Fatalf("%s: stream %d does not start", name, k)
				}
			}
			out := make([]byte, len(lits))
			i := prefix(&s.huff, out, q, &br)
			if i < len(lits)/4-64 {
				t.Errorf("%s, %s: the prefix decoded %d of %d symbols per stream", name, pname, i, len(lits)-3*q)
			}
			ends := [5]int{0, q, 2 * q, 3 * q, len(lits)}
			for k := range br {
				if !s.huffRest(out[ends[k]+i:ends[k+1]], br[k]) {
					t.Fatalf("%s, %s: stream %d does not end where it should", name, pname, k)
				}
			}
			if !bytes.Equal(out, lits) {
				t.Fatalf("%s, %s: decoded bytes differ from the input", name, pname)
			}
		}
	}
	if tried < 5 {
		t.Fatalf("only %d samples compress with Huffman codes", tried)
	}
}
