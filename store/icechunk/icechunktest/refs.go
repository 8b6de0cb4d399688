package icechunktest

// refs.go: references: spec 1 ref files and tag tombstones, the spec 2
// repo info file (repo.fbs); and a hostile repository (WriteLoop).

import (
	"bytes"
	"slices"
	"sort"
	"testing"
	"time"

	flatbuffers "github.com/google/flatbuffers/go"
)

// refs writes the references: spec 1 ref files, or the spec 2 repo info
// file with every snapshot written so far.
func (w *testWriter) refs(branches, tags map[string]ID, deleted []string) {
	if w.spec == 1 {
		write := func(kind, name string, id ID) {
			w.write("refs/"+kind+"."+name+"/ref.json", []byte(`{"snapshot":"`+id.String()+`"}`))
		}
		for n, id := range branches {
			write("branch", n, id)
		}
		for n, id := range tags {
			write("tag", n, id)
		}
		for _, n := range deleted {
			write("tag", n, w.snaps[0].id)
			w.write("refs/tag."+n+"/ref.json.deleted", nil)
		}
		return
	}
	// SnapshotInfo list sorted by id; parents as indexes into it.
	snaps := slices.Clone(w.snaps)
	sort.Slice(snaps, func(i, j int) bool { return bytes.Compare(snaps[i].id[:], snaps[j].id[:]) < 0 })
	index := map[ID]int{}
	for i, s := range snaps {
		index[s.id] = i
	}
	b := flatbuffers.NewBuilder(1024)
	refVec := func(m map[string]ID) flatbuffers.UOffsetT {
		names := make([]string, 0, len(m))
		for n := range m {
			names = append(names, n)
		}
		sort.Strings(names)
		var offs []flatbuffers.UOffsetT
		for _, n := range names {
			so := b.CreateString(n)
			b.StartObject(2)
			b.PrependUOffsetTSlot(0, so, 0)
			b.PrependUint32Slot(1, uint32(index[m[n]]), 0)
			offs = append(offs, b.EndObject())
		}
		return TableVector(b, offs)
	}
	tv, bv := refVec(tags), refVec(branches)
	sort.Strings(deleted)
	var dels []flatbuffers.UOffsetT
	for _, n := range deleted {
		dels = append(dels, b.CreateString(n))
	}
	dv := TableVector(b, dels)
	var infos []flatbuffers.UOffsetT
	for _, s := range snaps {
		msg := b.CreateString(s.message)
		meta := TableVector(b, nil)
		parent := int32(-1)
		if s.parent != nil {
			parent = int32(index[*s.parent])
		}
		// SnapshotInfo: id 0, parent_offset 1, flushed_at 2, message 3,
		// metadata 4.
		b.StartObject(6)
		b.PrependStructSlot(0, objectID(b, s.id[:]), 0)
		b.PrependInt32Slot(1, parent, 0)
		b.PrependUint64Slot(2, uint64(s.at.UnixMicro()), 0)
		b.PrependUOffsetTSlot(3, msg, 0)
		b.PrependUOffsetTSlot(4, meta, 0)
		infos = append(infos, b.EndObject())
	}
	sv := TableVector(b, infos)
	b.StartObject(3)
	status := b.EndObject()
	uv := TableVector(b, nil)
	rmeta := TableVector(b, nil)
	var config flatbuffers.UOffsetT
	if w.flexConfig != nil {
		config = b.CreateByteVector(w.flexConfig)
	}
	// Repo: spec_version 0, tags 1, branches 2, deleted_tags 3,
	// snapshots 4, status 5, metadata 6, latest_updates 7, config 9.
	b.StartObject(13)
	b.PrependUint8Slot(0, 2, 0)
	b.PrependUOffsetTSlot(1, tv, 0)
	b.PrependUOffsetTSlot(2, bv, 0)
	b.PrependUOffsetTSlot(3, dv, 0)
	b.PrependUOffsetTSlot(4, sv, 0)
	b.PrependUOffsetTSlot(5, status, 0)
	b.PrependUOffsetTSlot(6, rmeta, 0)
	b.PrependUOffsetTSlot(7, uv, 0)
	if config != 0 {
		b.PrependUOffsetTSlot(9, config, 0)
	}
	b.Finish(b.EndObject())
	w.write("repo", FileBytes(2, typeRepoInfo, b.FinishedBytes()))
}

// WriteLoop writes into the spec 1 repository at dir a snapshot that is
// its own parent and a branch "loop" to it, and returns its id.
func WriteLoop(t testing.TB, dir string) ID {
	w := &testWriter{t: t, dir: dir, spec: 1, next: 200}
	loop := &wSnapshot{id: w.newID(), at: time.Unix(1, 0), message: "loop"}
	loop.parent = &loop.id
	w.snapshot(loop)
	w.write("refs/branch.loop/ref.json", []byte(`{"snapshot":"`+loop.id.String()+`"}`))
	return loop.id
}
