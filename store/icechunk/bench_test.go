package icechunk

import (
	"testing"

	flatbuffers "github.com/google/flatbuffers/go"

	"github.com/zarrfs/zarrfs/store/icechunk/icechunktest"
)

// bigManifest builds a manifest of n native chunk references of one 2-D
// array (indexes (i/1000, i%1000)), all in one chunk file.
func bigManifest(n int) []byte {
	b := flatbuffers.NewBuilder(n * 64)
	refs := make([]flatbuffers.UOffsetT, n)
	for i := range n {
		b.StartVector(4, 2, 4)
		b.PrependUint32(uint32(i % 1000))
		b.PrependUint32(uint32(i / 1000))
		idx := b.EndVector(2)
		b.StartObject(10)
		b.PrependUOffsetTSlot(0, idx, 0)
		b.PrependUint64Slot(2, uint64(i)*4096, 0)
		b.PrependUint64Slot(3, 4096, 0)
		b.Prep(1, 12)
		for j := 11; j >= 0; j-- {
			b.PlaceByte(byte(j))
		}
		b.PrependStructSlot(4, b.Offset(), 0)
		refs[i] = b.EndObject()
	}
	rv := icechunktest.TableVector(b, refs)
	b.StartObject(3)
	b.Prep(1, 8)
	for j := 7; j >= 0; j-- {
		b.PlaceByte(1)
	}
	b.PrependStructSlot(0, b.Offset(), 0)
	b.PrependUOffsetTSlot(1, rv, 0)
	arr := b.EndObject()
	av := icechunktest.TableVector(b, []flatbuffers.UOffsetT{arr})
	b.StartObject(5)
	b.Prep(1, 12)
	for j := 11; j >= 0; j-- {
		b.PlaceByte(2)
	}
	b.PrependStructSlot(0, b.Offset(), 0)
	b.PrependUOffsetTSlot(1, av, 0)
	b.Finish(b.EndObject())
	return icechunktest.FileBytes(2, TypeManifest, b.FinishedBytes())
}

// BenchmarkParseManifest parses a manifest of 100,000 chunk references
// (zstd, as Icechunk writes it): the cost of the first read of a chunk
// of an array whose manifest is that large.
func BenchmarkParseManifest(b *testing.B) {
	data := bigManifest(100_000)
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseManifest(data); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkLookup finds chunk references in a parsed manifest of 100,000.
func BenchmarkLookup(b *testing.B) {
	m, err := ParseManifest(bigManifest(100_000))
	if err != nil {
		b.Fatal(err)
	}
	refs := m.Arrays[[8]byte{1, 1, 1, 1, 1, 1, 1, 1}]
	i := 0
	for b.Loop() {
		if findRef(refs, []uint32{uint32(i % 100), uint32(i * 7 % 1000)}) == nil {
			b.Fatal("not found")
		}
		i++
	}
}
