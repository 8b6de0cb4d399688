package icechunktest

// snapshot.go: snapshot files (snapshot.fbs): nodes, shapes of spec 1
// and 2, manifest references, and the manifests each snapshot needs.

import (
	"bytes"
	"slices"
	"sort"

	flatbuffers "github.com/google/flatbuffers/go"
)

// snapshot writes snapshot s (and its manifests).
func (w *testWriter) snapshot(s *wSnapshot) {
	w.snaps = append(w.snaps, s)
	type mfile struct {
		id          ID
		size, nrefs int
	}
	var mfiles []mfile
	refsOf := map[string][]flatbuffers.UOffsetT{} // filled below, per node
	b := flatbuffers.NewBuilder(1024)
	// Manifests: one per extent box (all nodes' chunks in the box
	// sharing a manifest when boxes coincide).
	type box struct {
		node   *wNode
		from   []uint32
		to     []uint32
		manID  ID
		chunks []wChunk
	}
	var boxes []*box
	for i := range s.nodes {
		n := &s.nodes[i]
		if !n.array || len(s.chunks[n.path]) == 0 {
			continue
		}
		split := n.split
		if split == nil {
			var from, to []uint32
			for d := range n.shape {
				from = append(from, 0)
				to = append(to, uint32((n.shape[d]+n.chunks[d]-1)/n.chunks[d]))
			}
			split = [][2][]uint32{{from, to}}
		}
		for _, sp := range split {
			bx := &box{node: n, from: sp[0], to: sp[1]}
			for _, c := range s.chunks[n.path] {
				if covers(bx.from, bx.to, c.index) {
					bx.chunks = append(bx.chunks, c)
				}
			}
			if len(bx.chunks) > 0 {
				boxes = append(boxes, bx)
			}
		}
	}
	for _, bx := range boxes {
		id, size, nrefs := w.manifest(map[[8]byte][]wChunk{bx.node.id: bx.chunks})
		bx.manID = id
		mfiles = append(mfiles, mfile{id, size, nrefs})
	}
	sort.Slice(mfiles, func(i, j int) bool { return bytes.Compare(mfiles[i].id[:], mfiles[j].id[:]) < 0 })
	for _, bx := range boxes {
		b.StartVector(8, len(bx.from), 4)
		for d := len(bx.from) - 1; d >= 0; d-- {
			b.Prep(4, 8)
			b.PrependUint32(bx.to[d])
			b.PrependUint32(bx.from[d])
		}
		ext := b.EndVector(len(bx.from))
		// ManifestRef: object_id 0, extents 1.
		b.StartObject(2)
		b.PrependStructSlot(0, objectID(b, bx.manID[:]), 0)
		b.PrependUOffsetTSlot(1, ext, 0)
		refsOf[bx.node.path] = append(refsOf[bx.node.path], b.EndObject())
	}
	nodes := slices.Clone(s.nodes)
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].path < nodes[j].path })
	var nodeOffs []flatbuffers.UOffsetT
	for _, n := range nodes {
		path := b.CreateString(n.path)
		ud := b.CreateByteVector([]byte(n.userData))
		var data flatbuffers.UOffsetT
		kind := byte(2)
		if n.array {
			kind = 1
			var shapeV2 []flatbuffers.UOffsetT
			if w.spec == 2 {
				for d := range n.shape {
					// DimensionShapeV2: array_length 0, num_chunks 1.
					b.StartObject(2)
					b.PrependUint64Slot(0, n.shape[d], 0)
					b.PrependUint32Slot(1, uint32((n.shape[d]+n.chunks[d]-1)/n.chunks[d]), 0)
					shapeV2 = append(shapeV2, b.EndObject())
				}
			}
			var sv2 flatbuffers.UOffsetT
			if w.spec == 2 {
				sv2 = TableVector(b, shapeV2)
			}
			// shape: [DimensionShape] structs (array_length,
			// chunk_length), empty in spec 2.
			rank := len(n.shape)
			if w.spec == 2 {
				rank = 0
			}
			b.StartVector(16, rank, 8)
			for d := rank - 1; d >= 0; d-- {
				b.Prep(8, 16)
				b.PrependUint64(n.chunks[d])
				b.PrependUint64(n.shape[d])
			}
			shape := b.EndVector(rank)
			var names []flatbuffers.UOffsetT
			for _, dn := range n.dimNames {
				var so flatbuffers.UOffsetT
				if dn != "" {
					so = b.CreateString(dn)
				}
				b.StartObject(1)
				if so != 0 {
					b.PrependUOffsetTSlot(0, so, 0)
				}
				names = append(names, b.EndObject())
			}
			var nv flatbuffers.UOffsetT
			if n.dimNames != nil {
				nv = TableVector(b, names)
			}
			mv := TableVector(b, refsOf[n.path])
			// ArrayNodeData: shape 0, dimension_names 1, manifests 2,
			// shape_v2 3.
			b.StartObject(4)
			b.PrependUOffsetTSlot(0, shape, 0)
			if nv != 0 {
				b.PrependUOffsetTSlot(1, nv, 0)
			}
			b.PrependUOffsetTSlot(2, mv, 0)
			if sv2 != 0 {
				b.PrependUOffsetTSlot(3, sv2, 0)
			}
			data = b.EndObject()
		} else {
			b.StartObject(0)
			data = b.EndObject()
		}
		// NodeSnapshot: id 0, path 1, user_data 2, node_data_type 3,
		// node_data 4.
		b.StartObject(6)
		b.PrependStructSlot(0, objectID(b, n.id[:]), 0)
		b.PrependUOffsetTSlot(1, path, 0)
		b.PrependUOffsetTSlot(2, ud, 0)
		b.PrependByteSlot(3, kind, 0)
		b.PrependUOffsetTSlot(4, data, 0)
		nodeOffs = append(nodeOffs, b.EndObject())
	}
	nv := TableVector(b, nodeOffs)
	msg := b.CreateString(s.message)
	meta := TableVector(b, nil)
	// manifest_files (spec 1: ManifestFileInfo structs of 32 bytes: id,
	// 4 bytes of padding, size_bytes, num_chunk_refs, 4 of padding) or
	// manifest_files_v2 (spec 2: tables).
	var mf, mf2 flatbuffers.UOffsetT
	if w.spec == 1 {
		b.StartVector(32, len(mfiles), 8)
		for i := len(mfiles) - 1; i >= 0; i-- {
			b.Prep(8, 32)
			b.Pad(4)
			b.PrependUint32(uint32(mfiles[i].nrefs))
			b.PrependUint64(uint64(mfiles[i].size))
			b.Pad(4)
			objectID(b, mfiles[i].id[:])
		}
		mf = b.EndVector(len(mfiles))
	} else {
		b.StartVector(32, 0, 8)
		mf = b.EndVector(0)
		var offs []flatbuffers.UOffsetT
		for _, m := range mfiles {
			b.StartObject(4)
			b.PrependStructSlot(0, objectID(b, m.id[:]), 0)
			b.PrependUint64Slot(1, uint64(m.size), 0)
			b.PrependUint32Slot(2, uint32(m.nrefs), 0)
			offs = append(offs, b.EndObject())
		}
		mf2 = TableVector(b, offs)
	}
	// Snapshot: id 0, parent_id 1, nodes 2, flushed_at 3, message 4,
	// metadata 5, manifest_files 6, manifest_files_v2 7.
	b.StartObject(9)
	b.PrependStructSlot(0, objectID(b, s.id[:]), 0)
	if w.spec == 1 && s.parent != nil {
		b.PrependStructSlot(1, objectID(b, s.parent[:]), 0)
	}
	b.PrependUOffsetTSlot(2, nv, 0)
	b.PrependUint64Slot(3, uint64(s.at.UnixMicro()), 0)
	b.PrependUOffsetTSlot(4, msg, 0)
	b.PrependUOffsetTSlot(5, meta, 0)
	b.PrependUOffsetTSlot(6, mf, 0)
	if mf2 != 0 {
		b.PrependUOffsetTSlot(7, mf2, 0)
	}
	b.Finish(b.EndObject())
	w.write("snapshots/"+s.id.String(), FileBytes(w.spec, typeSnapshot, b.FinishedBytes()))
}
