package icechunktest

// manifest.go: manifest files (manifest.fbs), chunk references in
// FlatBuffers, virtual locations optionally compressed with a dictionary.

import (
	"bytes"
	"fmt"
	"slices"
	"sort"

	flatbuffers "github.com/google/flatbuffers/go"
	"github.com/klauspost/compress/zstd"
)

// manifest writes the manifest of one snapshot's chunks for the nodes
// and extents given, returning its id, size and number of refs.
func (w *testWriter) manifest(arrays map[[8]byte][]wChunk) (ID, int, int) {
	id := w.newID()
	b := flatbuffers.NewBuilder(1024)
	var nodeIDs [][8]byte
	for k := range arrays {
		nodeIDs = append(nodeIDs, k)
	}
	sort.Slice(nodeIDs, func(i, j int) bool { return bytes.Compare(nodeIDs[i][:], nodeIDs[j][:]) < 0 })
	var dict []byte
	var enc *zstd.Encoder
	if w.spec == 2 && w.compressed {
		var locs [][]byte
		var hist []byte
		for _, n := range nodeIDs {
			for _, c := range arrays[n] {
				if c.location != "" {
					locs = append(locs, []byte(c.location))
					hist = append(hist, c.location...)
				}
			}
		}
		if len(locs) > 0 {
			// BuildDict wants samples that share content with the
			// history and have bytes of their own: variants of the locations.
			base := len(locs)
			for i := range 64 {
				locs = append(locs, []byte(fmt.Sprintf("%s?v=%x%c", locs[i%base], i*7919, 'A'+i%26)))
			}
			var err error
			dict, err = zstd.BuildDict(zstd.BuildDictOptions{ID: 7, Contents: locs, History: hist, Offsets: [3]int{1, 4, 8}, Level: zstd.SpeedFastest})
			if err != nil {
				w.t.Fatal(err)
			}
			enc, err = zstd.NewWriter(nil, zstd.WithEncoderDict(dict))
			if err != nil {
				w.t.Fatal(err)
			}
			defer enc.Close()
		}
	}
	nrefs := 0
	var arrs []flatbuffers.UOffsetT
	for _, n := range nodeIDs {
		refs := slices.Clone(arrays[n])
		sort.Slice(refs, func(i, j int) bool { return compareIndex(refs[i].index, refs[j].index) < 0 })
		var offs []flatbuffers.UOffsetT
		for _, c := range refs {
			nrefs++
			b.StartVector(4, len(c.index), 4)
			for i := len(c.index) - 1; i >= 0; i-- {
				b.PrependUint32(c.index[i])
			}
			idx := b.EndVector(len(c.index))
			var inl, loc, etag, cloc flatbuffers.UOffsetT
			if c.inline != nil {
				inl = b.CreateByteVector(c.inline)
			}
			if c.location != "" {
				if enc != nil {
					cloc = b.CreateByteVector(enc.EncodeAll([]byte(c.location), nil))
				} else {
					loc = b.CreateString(c.location)
				}
			}
			if c.etag != "" {
				etag = b.CreateString(c.etag)
			}
			// ChunkRef: index 0, inline 1, offset 2, length 3,
			// chunk_id 4, location 5, checksum_etag 6,
			// checksum_last_modified 7, compressed_location 8.
			b.StartObject(10)
			b.PrependUOffsetTSlot(0, idx, 0)
			if inl != 0 {
				b.PrependUOffsetTSlot(1, inl, 0)
			}
			b.PrependUint64Slot(2, c.offset, 0)
			b.PrependUint64Slot(3, c.length, 0)
			if c.chunkID != nil {
				b.PrependStructSlot(4, objectID(b, c.chunkID[:]), 0)
			}
			if loc != 0 {
				b.PrependUOffsetTSlot(5, loc, 0)
			}
			if etag != 0 {
				b.PrependUOffsetTSlot(6, etag, 0)
			}
			b.PrependUint32Slot(7, c.lastMod, 0)
			if cloc != 0 {
				b.PrependUOffsetTSlot(8, cloc, 0)
			}
			offs = append(offs, b.EndObject())
		}
		rv := TableVector(b, offs)
		// ArrayManifest: node_id 0, refs 1.
		b.StartObject(3)
		b.PrependStructSlot(0, objectID(b, n[:]), 0)
		b.PrependUOffsetTSlot(1, rv, 0)
		arrs = append(arrs, b.EndObject())
	}
	av := TableVector(b, arrs)
	var dv flatbuffers.UOffsetT
	if dict != nil {
		dv = b.CreateByteVector(dict)
	}
	// Manifest: id 0, arrays 1, location_dictionary 2,
	// compression_algorithm 3 (default 1).
	b.StartObject(5)
	b.PrependStructSlot(0, objectID(b, id[:]), 0)
	b.PrependUOffsetTSlot(1, av, 0)
	if dv != 0 {
		b.PrependUOffsetTSlot(2, dv, 0)
	}
	if w.spec == 2 && dict == nil {
		b.PrependUint8Slot(3, 0, 1)
	}
	b.Finish(b.EndObject())
	data := FileBytes(w.spec, typeManifest, b.FinishedBytes())
	w.write("manifests/"+id.String(), data)
	return id, len(data), nrefs
}
