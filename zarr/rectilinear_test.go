package zarr

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// pythonWriteRectilinear writes arrays with the rectilinear chunk grid of
// zarr-extensions (chunk-grids/rectilinear, July 2026) with NumPy and the
// standard library, since neither zarr-python 2.13 nor zarrita here
// implements the grid:
//
//   - "spec": the README's own example, "shape": [6, 6, 6, 6, 6],
//     "chunk_shapes": [4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]]
//     ("integer. expands to [4, 4]", "explicit list", "run-length
//     encoded. expands to [4, 4]", "run-length encoded and explicit list.
//     expands to [1, 1, 1, 3]", "explicit list with overflow chunks"),
//     uint16, bytes + gzip, two chunks missing (the fill value 7);
//   - "sharded": [6, 10] float32 with chunk_shapes [[[2, 3]], [4, 6]] and
//     sharding_indexed inside (inner chunks [2, 2], index at the end);
//   - "diagram": the README's diagram, edge lengths [[16, 10], [24, 14]]
//     on a [26, 38] int8 array.
//
// Each chunk holds its region of the array, padded to the chunk's full
// edge lengths (the last chunks overhang the array) with the fill value,
// in C order. The whole arrays are written to NAME.bin for comparison.
const pythonWriteRectilinear = `
import gzip, json, os, struct, sys, itertools, numpy as np
root, ref = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(17)
def put(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    open(path, "wb").write(data)
put(root + "/zarr.json", b'{"zarr_format": 3, "node_type": "group", "attributes": {}}')
def expand(spec, length):
    if isinstance(spec, int):
        spec = [spec] * (-(-length // spec))
    out = []
    for x in spec:
        out += [x[0]] * x[1] if isinstance(x, list) else [x]
    return out
def write(name, dtype, shape, chunk_shapes, fill, codecs, encode, missing=()):
    a = rng.integers(-100, 1000, size=shape).astype(dtype)
    put(root + "/" + name + "/zarr.json", json.dumps({"zarr_format": 3, "node_type": "array", "shape": shape,
        "data_type": np.dtype(dtype).name, "chunk_grid": {"name": "rectilinear", "configuration": {"kind": "inline",
        "chunk_shapes": chunk_shapes}}, "chunk_key_encoding": {"name": "default"}, "fill_value": fill,
        "codecs": codecs, "attributes": {}}).encode())
    edges = [expand(s, n) for s, n in zip(chunk_shapes, shape)]
    starts = [np.concatenate([[0], np.cumsum(e)]) for e in edges]
    for idx in itertools.product(*[range(len(e)) for e in edges]):
        if any(starts[d][i] >= shape[d] for d, i in enumerate(idx)):
            continue  # an overflow chunk wholly past the array
        region = tuple(slice(starts[d][i], min(starts[d][i + 1], shape[d])) for d, i in enumerate(idx))
        if idx in missing:
            a[region] = fill
            continue
        chunk = np.full([edges[d][i] for d, i in enumerate(idx)], fill, dtype=dtype)
        chunk[tuple(slice(0, r.stop - r.start) for r in region)] = a[region]
        put(root + "/" + name + "/c/" + "/".join(map(str, idx)), encode(chunk))
    open(ref + "/" + name + ".bin", "wb").write(a.astype(np.dtype(dtype).newbyteorder("<")).tobytes())
write("spec", "<u2", [6, 6, 6, 6, 6], [4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]], 7,
      [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}}],
      lambda c: gzip.compress(c.tobytes()), missing={(0, 1, 0, 2, 0), (1, 2, 1, 3, 1)})
def shard(chunk):
    inner = [2, 2]
    n = [chunk.shape[0] // 2, chunk.shape[1] // 2]
    body, index = b"", []
    for i, j in itertools.product(range(n[0]), range(n[1])):
        data = chunk[2 * i:2 * i + 2, 2 * j:2 * j + 2].tobytes()
        index.append((len(body), len(data)))
        body += data
    return body + b"".join(struct.pack("<QQ", o, l) for o, l in index)
write("sharded", "<f4", [6, 10], [[[2, 3]], [4, 6]], 0,
      [{"name": "sharding_indexed", "configuration": {"chunk_shape": [2, 2], "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}], "index_location": "end"}}], shard)
write("diagram", "|i1", [26, 38], [[16, 10], [24, 14]], 0, [{"name": "bytes"}], lambda c: c.tobytes())
`

// TestPeerRectilinear reads the arrays of pythonWriteRectilinear whole,
// in parts (ranges across chunks of different shapes) and by orthogonal
// selection (what previews use), and checks the README's worked example:
// "the array index (20, 15) resolves to the chunk grid index (1, 0) and
// the chunk index (4, 15)".
func TestPeerRectilinear(t *testing.T) {
	peertest.NeedPython(t)
	root, refs := t.TempDir(), t.TempDir()
	peertest.RunPython(t, pythonWriteRectilinear, root, refs)
	ctx := context.Background()
	h := openDir(t, root)
	for _, name := range []string{"spec", "sharded", "diagram"} {
		want := readFile(t, filepath.Join(refs, name+".bin"))
		n, got := readArray(t, h, name)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: whole read differs from NumPy's array", name)
			continue
		}
		if !strings.Contains(n.Info().Text(), "rectilinear") {
			t.Errorf("%s: info.txt does not name the grid", name)
		}
		a := n.Array
		for _, r := range [][2]int64{{1, 17}, {100, 3000}, {int64(len(want)) - 41, int64(len(want))}} {
			size := int64(len(want))
			off, end := min(r[0], size/2)/int64(a.DataType().Size)*int64(a.DataType().Size), min(r[1], size)
			p := make([]byte, end-off)
			if k, err := a.ReadAt(ctx, p, off); k != len(p) || err != nil || !bytes.Equal(p, want[off:end]) {
				t.Errorf("%s: ReadAt(%d, %d) = %d, %v (equal %v)", name, off, len(p), k, err, bytes.Equal(p, want[off:end]))
			}
		}
	}
	// A small read of the sharded array decodes only the inner chunks it
	// needs (a random reader's read: not sequential).
	sh, err := openDir(t, root).Node(ctx, "sharded") // nothing cached yet
	must(t, err)
	shWant := readFile(t, filepath.Join(refs, "sharded.bin"))
	before := partialDecodes.Load()
	p := make([]byte, 8)
	if k, err := sh.Array.ReadAt(ctx, p, 4*(4*10+6)); k != 8 || err != nil || !bytes.Equal(p, shWant[4*46:4*46+8]) {
		t.Errorf("sharded: ReadAt of 2 elements = %d, %v", k, err)
	}
	if partialDecodes.Load() == before {
		t.Errorf("sharded: the small read decoded whole shards")
	}

	// An orthogonal selection, as a preview's plane: rows 3, 9, 20, 25
	// and every fifth column of the diagram's array.
	n, err := h.Node(ctx, "diagram")
	must(t, err)
	want := readFile(t, filepath.Join(refs, "diagram.bin"))
	rows, cols := []int64{3, 9, 20, 25}, []int64{0, 5, 10, 15, 20, 25, 30, 35}
	sel := make([]byte, len(rows)*len(cols))
	must(t, n.Array.ReadOrthogonal(ctx, [][]int64{rows, cols}, sel))
	for i, r := range rows {
		for j, c := range cols {
			if sel[i*len(cols)+j] != want[r*38+c] {
				t.Errorf("diagram[%d, %d] = %d, want %d", r, c, int8(sel[i*len(cols)+j]), int8(want[r*38+c]))
			}
		}
	}
	l := n.Array.Layout()
	c0, s0, _ := l.Locate(0, 20)
	c1, s1, _ := l.Locate(1, 15)
	if c0 != 1 || c1 != 0 || 20-s0 != 4 || 15-s1 != 15 {
		t.Errorf("(20, 15) is in chunk (%d, %d) at (%d, %d), want (1, 0) at (4, 15)", c0, c1, 20-s0, 15-s1)
	}
	// Writing is refused (the engine writes regular grids only).
	if _, err := n.Array.WriteAt(ctx, []byte{1}, 0); !errors.Is(err, ErrUnsupported) {
		t.Errorf("WriteAt: %v, want ErrUnsupported", err)
	}
}

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(name)
	must(t, err)
	return b
}
