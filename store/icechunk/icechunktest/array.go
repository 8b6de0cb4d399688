package icechunktest

// array.go: a repository of one array with many native chunks, for
// benchmarks (bench/benchdata) as well as tests.

import "time"

// Chunk is one chunk of WriteArray's array: its index and its stored
// (encoded) bytes.
type Chunk struct {
	Index []uint32
	Data  []byte
}

// WriteArray writes into dir (created) a repository of spec version spec
// (1 or 2) with one snapshot, on branch main: a root group and the Zarr
// v3 array at path ("arr", "a/b": its parent groups are written too)
// whose metadata is zarrJSON and whose lengths and chunk lengths are
// shape and chunkShape. Each chunk is stored natively, in a chunk file of
// its own, and listed in one manifest.
func WriteArray(f Fataler, dir string, spec int, path, zarrJSON string, shape, chunkShape []uint64, chunks []Chunk) {
	f.Helper()
	w := &testWriter{t: f, dir: dir, spec: spec}
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	init := &wSnapshot{id: w.newID(), at: at, message: "Repository initialized"}
	w.snapshot(init)
	nodes := []wNode{{id: [8]byte{0, 1}, path: "/", userData: `{"zarr_format":3,"node_type":"group","attributes":{}}`}}
	for i := 0; i < len(path); i++ {
		if path[i] == '/' {
			nodes = append(nodes, wNode{id: [8]byte{0, 2, byte(i)}, path: "/" + path[:i], userData: `{"zarr_format":3,"node_type":"group","attributes":{}}`})
		}
	}
	arr := wNode{id: [8]byte{1, 1}, path: "/" + path, array: true, shape: shape, chunks: chunkShape, userData: zarrJSON}
	nodes = append(nodes, arr)
	refs := make([]wChunk, 0, len(chunks))
	for _, c := range chunks {
		id, _ := w.chunkFile(c.Data)
		refs = append(refs, wChunk{index: c.Index, chunkID: &id, length: uint64(len(c.Data))})
	}
	s := &wSnapshot{id: w.newID(), parent: &init.id, at: at.Add(time.Minute), message: "write " + path,
		nodes: nodes, chunks: map[string][]wChunk{arr.path: refs}}
	w.snapshot(s)
	w.refs(map[string]ID{"main": s.id}, map[string]ID{}, nil)
}
