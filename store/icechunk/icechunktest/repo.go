package icechunktest

// repo.go: the test repository Write writes (its snapshots, arrays and
// values) and what each array holds (Expected).

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// arrayJSON is an array's zarr.json as zarr-python 3 writes it for
// Icechunk: bytes (little-endian) then zstd.
func arrayJSON(shape, chunks []uint64, dtype, fill string, keyEnc string, dims []string) string {
	m := map[string]any{
		"zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
		"chunk_grid":         map[string]any{"name": "regular", "configuration": map[string]any{"chunk_shape": chunks}},
		"chunk_key_encoding": json.RawMessage(keyEnc),
		"fill_value":         json.RawMessage(fill),
		"codecs": []any{map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "little"}},
			map[string]any{"name": "zstd", "configuration": map[string]any{"level": 0, "checksum": false}}},
		"attributes": map[string]any{"written by": "zarrfs test writer"},
	}
	if dims != nil {
		m["dimension_names"] = dims
	}
	b, _ := json.Marshal(m)
	return string(b)
}

const groupJSON = `{"zarr_format":3,"node_type":"group","attributes":{"this":"is a nice group","size":42.0}}`

// zstdChunk encodes the elements of one chunk (little-endian) as the
// arrays' codecs do: bytes, then zstd.
func zstdChunk(vals []float64, itemsize int) []byte {
	raw := make([]byte, len(vals)*itemsize)
	for i, v := range vals {
		switch itemsize {
		case 1:
			raw[i] = byte(int8(v))
		case 2:
			binary.LittleEndian.PutUint16(raw[2*i:], uint16(int16(v)))
		case 4:
			binary.LittleEndian.PutUint32(raw[4*i:], math.Float32bits(float32(v)))
		}
	}
	return testEncoder.EncodeAll(raw, nil)
}

// chunkVals returns the values of chunk idx of a 2-D array of shape
// (rows, cols) and chunks (cr, cc), elements f(i, j), padded with 0 past
// the edge as Zarr writes edge chunks whole.
func chunkVals(idx []uint32, cr, cc int, f func(i, j int) float64) []float64 {
	out := make([]float64, 0, cr*cc)
	for a := range cr {
		for b := range cc {
			out = append(out, f(int(idx[0])*cr+a, int(idx[1])*cc+b))
		}
	}
	return out
}

// Values of the test repository's arrays, as formulas.
func bigValue(i, j int) float64   { return float64(i*10+j) + 0.5 }
func innerValue(i, j int) float64 { return float64(i*4 - j) }

// Repo is what Write wrote: its directory and the snapshot ids by name.
type Repo struct {
	Dir   string
	Snaps map[string]ID
	// VirtualFile holds the virtual chunk (at offset 7); with
	// Options.VirtualURL the caller copies it there.
	VirtualFile string

	w              *testWriter
	branches, tags map[string]ID
	deleted        []string
}

// SetBranch points branch name at snapshot snap ("s1" … "s5") and writes
// the references again (spec 1: the branch's ref.json; spec 2: the repo
// info file, replaced by a rename as Icechunk's conditional write
// replaces it).
func (r *Repo) SetBranch(name, snap string) {
	r.branches[name] = r.Snaps[snap]
	r.w.refs(r.branches, r.tags, r.deleted)
}

// SetContainers replaces the repository's virtual chunk containers
// (spec 1: config.yaml; spec 2: the repo info's config, written again
// with the references).
func (r *Repo) SetContainers(cs []Container) {
	r.w.config(cs)
	r.w.refs(r.branches, r.tags, r.deleted)
}

// Write writes, in the manner of the Icechunk project's
// test_can_read_old.py, a repository of spec version spec into a new
// directory, and a file of virtual chunks beside it:
//
//	init  "Repository initialized"        no nodes
//	s1    "empty structure"               /, /group1, /group1/big (float32 10×10, chunks 5×5, fill NaN),
//	                                      /group1/small (int8 5, chunks 1, fill 8)
//	s2    "fill data"                     big = i*10+j+0.5 in native chunks (two chunks in one file),
//	                                      small = 84 inline
//	s3    "set virtual chunk"             big chunk (0,0) virtual, at offset 7 of a file outside the repo   ← main
//	s4    "delete a chunk" (on dev)       small chunk 4 deleted (fill 8)                                     ← tag v1
//	s5    "more structure" (on dev)       /group2/inner (int16 5×4, chunks 2×2, v2 keys "i.j",
//	                                      two manifests split along dimension 0) = i*4-j                     ← dev, tag v2
//
// and tag "gone" deleted.
func Write(t testing.TB, spec int, compressed bool) *Repo {
	t.Helper()
	return WriteWith(t, spec, compressed, Options{})
}

// WriteWith is Write with opts (config.go).
func WriteWith(t testing.TB, spec int, compressed bool, opts Options) *Repo {
	t.Helper()
	top := t.TempDir()
	w := &testWriter{t: t, dir: filepath.Join(top, "repo"), spec: spec, compressed: compressed}
	virt := filepath.Join(top, "virtual.bin")
	day := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	init := &wSnapshot{id: ID{0x0b, 0x1c, 0xc8, 0xd6, 0x78, 0x75, 0x80, 0xf0, 0xe3, 0x3a, 0x65, 0x34},
		at: day, message: "Repository initialized"}
	w.snapshot(init)

	big := wNode{id: [8]byte{1, 1}, path: "/group1/big", array: true, shape: []uint64{10, 10}, chunks: []uint64{5, 5},
		userData: arrayJSON([]uint64{10, 10}, []uint64{5, 5}, "float32", `"NaN"`,
			`{"name":"default","configuration":{"separator":"/"}}`, []string{"y", "x"}), dimNames: []string{"y", "x"}}
	small := wNode{id: [8]byte{1, 2}, path: "/group1/small", array: true, shape: []uint64{5}, chunks: []uint64{1},
		userData: arrayJSON([]uint64{5}, []uint64{1}, "int8", `8`, `{"name":"default","configuration":{"separator":"/"}}`, nil)}
	structure := []wNode{
		{id: [8]byte{0, 1}, path: "/", userData: `{"zarr_format":3,"node_type":"group","attributes":{}}`},
		{id: [8]byte{0, 2}, path: "/group1", userData: groupJSON},
		big, small,
	}
	s1 := &wSnapshot{id: w.newID(), parent: &init.id, at: day.Add(time.Hour), message: "empty structure", nodes: structure}
	w.snapshot(s1)

	bigChunks := func(virtual bool) []wChunk {
		c00 := zstdChunk(chunkVals([]uint32{0, 0}, 5, 5, bigValue), 4)
		c01 := zstdChunk(chunkVals([]uint32{0, 1}, 5, 5, bigValue), 4)
		c10 := zstdChunk(chunkVals([]uint32{1, 0}, 5, 5, bigValue), 4)
		c11 := zstdChunk(chunkVals([]uint32{1, 1}, 5, 5, bigValue), 4)
		shared, offs := w.chunkFile(c01, c10)
		own, _ := w.chunkFile(c11)
		out := []wChunk{
			{index: []uint32{0, 1}, chunkID: &shared, offset: offs[0], length: uint64(len(c01))},
			{index: []uint32{1, 0}, chunkID: &shared, offset: offs[1], length: uint64(len(c10))},
			{index: []uint32{1, 1}, chunkID: &own, length: uint64(len(c11))},
		}
		if !virtual {
			first, _ := w.chunkFile(c00)
			return append(out, wChunk{index: []uint32{0, 0}, chunkID: &first, length: uint64(len(c00))})
		}
		if err := os.WriteFile(virt, append([]byte("garbage"), c00...), 0o644); err != nil {
			t.Fatal(err)
		}
		loc := "file://" + virt
		if opts.VirtualURL != "" {
			loc = opts.VirtualURL
		}
		return append(out, wChunk{index: []uint32{0, 0}, location: loc, offset: 7, length: uint64(len(c00)),
			lastMod: uint32(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Unix())})
	}
	smallChunks := func(n int) []wChunk {
		var out []wChunk
		for i := range n {
			out = append(out, wChunk{index: []uint32{uint32(i)}, inline: zstdChunk([]float64{84}, 1)})
		}
		return out
	}
	s2 := &wSnapshot{id: w.newID(), parent: &s1.id, at: day.Add(2 * time.Hour), message: "fill data", nodes: structure,
		chunks: map[string][]wChunk{big.path: bigChunks(false), small.path: smallChunks(5)}}
	w.snapshot(s2)
	s3 := &wSnapshot{id: w.newID(), parent: &s2.id, at: day.Add(3 * time.Hour), message: "set virtual chunk", nodes: structure,
		chunks: map[string][]wChunk{big.path: bigChunks(true), small.path: smallChunks(5)}}
	w.snapshot(s3)
	s4 := &wSnapshot{id: w.newID(), parent: &s3.id, at: day.Add(4 * time.Hour), message: "delete a chunk", nodes: structure,
		chunks: map[string][]wChunk{big.path: s3.chunks[big.path], small.path: smallChunks(4)}}
	w.snapshot(s4)

	inner := wNode{id: [8]byte{2, 1}, path: "/group2/inner", array: true, shape: []uint64{5, 4}, chunks: []uint64{2, 2},
		userData: arrayJSON([]uint64{5, 4}, []uint64{2, 2}, "int16", `0`, `{"name":"v2","configuration":{"separator":"."}}`, nil),
		split:    [][2][]uint32{{{0, 0}, {2, 2}}, {{2, 0}, {3, 2}}}}
	var innerChunks []wChunk
	for ci := range 3 {
		for cj := range 2 {
			idx := []uint32{uint32(ci), uint32(cj)}
			id, _ := w.chunkFile(zstdChunk(chunkVals(idx, 2, 2, innerValue), 2))
			innerChunks = append(innerChunks, wChunk{index: idx, chunkID: &id, length: uint64(len(zstdChunk(chunkVals(idx, 2, 2, innerValue), 2)))})
		}
	}
	more := append(slices.Clone(structure),
		wNode{id: [8]byte{2, 0}, path: "/group2", userData: groupJSON}, inner)
	s5 := &wSnapshot{id: w.newID(), parent: &s4.id, at: day.Add(5 * time.Hour), message: "more structure", nodes: more,
		chunks: map[string][]wChunk{big.path: s4.chunks[big.path], small.path: s4.chunks[small.path], inner.path: innerChunks}}
	w.snapshot(s5)
	w.config(opts.Containers)
	r := &Repo{Dir: w.dir, VirtualFile: virt, Snaps: map[string]ID{"init": init.id, "s1": s1.id, "s2": s2.id, "s3": s3.id, "s4": s4.id, "s5": s5.id},
		w: w, branches: map[string]ID{"main": s3.id, "dev": s5.id}, tags: map[string]ID{"v1": s4.id, "v2": s5.id}, deleted: []string{"gone"}}
	w.refs(r.branches, r.tags, r.deleted)
	return r
}

// Expected returns the elements of each array of snapshot name
// ("s1" … "s5"), C order, as formulas give them; nil: the array is absent.
func Expected(snap, array string) []float64 {
	n := map[string]int{"init": 0, "s1": 1, "s2": 2, "s3": 3, "s4": 4, "s5": 5}[snap]
	switch array {
	case "group1/big":
		if n < 1 {
			return nil
		}
		var out []float64
		for i := range 10 {
			for j := range 10 {
				if n == 1 {
					out = append(out, math.NaN())
				} else {
					out = append(out, float64(float32(bigValue(i, j))))
				}
			}
		}
		return out
	case "group1/small":
		if n < 1 {
			return nil
		}
		out := []float64{8, 8, 8, 8, 8}
		for i := range out {
			if n >= 2 && (i < 4 || n < 4) {
				out[i] = 84
			}
		}
		return out
	case "group2/inner":
		if n < 5 {
			return nil
		}
		var out []float64
		for i := range 5 {
			for j := range 4 {
				out = append(out, innerValue(i, j))
			}
		}
		return out
	}
	return nil
}
