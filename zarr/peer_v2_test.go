package zarr

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/dir"
)

// pythonWriteV2 writes v2 arrays with zarr-python across data types,
// compressors, orders, separators, shapes and partly written arrays. For
// each it writes NAME.bin, the array as little-endian C-order bytes, to
// the reference directory and prints one JSON line describing it.
const pythonWriteV2 = `
import sys, json, itertools, numpy as np, zarr, numcodecs
root, refdir = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(42)
g = zarr.open_group(zarr.DirectoryStore(root), mode="w")
dtypes = ["<f4", ">f4", "<f8", ">f8", "<i2", ">i2", "<i8", ">i8", "|u1", "|i1", "<u4", ">u8",
          "|b1", "<c8", ">c16", "<f2", ">f2", "|S7", "<U7", ">U3", "|V8", "<M8[ns]", ">m8[s]", "<i4", ">u2"]
shapes = [((), ()), ((0,), (3,)), ((1,), (1,)), ((10,), (3,)), ((7, 5), (3, 2)), ((4, 1, 6), (3, 1, 4)),
          ((2, 3, 4, 5), (1, 2, 3, 2)), ((5, 0, 3), (2, 2, 2)), ((13,), (20,)), ((6, 4), (6, 4)), ((9, 4, 3), (2, 4, 3))]
compressors = [None, numcodecs.GZip(level=1), numcodecs.Zlib(level=1), numcodecs.Zstd(level=1)]
fills = {"f": [float("nan"), -np.inf, 1.5, 0.0], "i": [7, -3, 0], "u": [7, 0], "b": [True, False],
         "c": [1 + 2j, 0j], "S": [b"ab", b""], "U": ["xy", ""], "V": [b"\x01\x02\x03\x04\x05\x06\x07\x08"],
         "M": [5], "m": [-2]}

def data(dt, shape):
    n = int(np.prod(shape))
    if dt.kind in "fc":
        a = rng.standard_normal(n * (2 if dt.kind == "c" else 1)) * 100
        if dt.kind == "c":
            a = a[:n] + 1j * a[n:]
        return a.astype(dt).reshape(shape)
    if dt.kind == "b":
        return (rng.integers(0, 2, n) == 1).reshape(shape)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return rng.integers(info.min, info.max, n, dtype=dt.newbyteorder("=")).astype(dt).reshape(shape)
    if dt.kind in "SV":
        return np.frombuffer(rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).tobytes(), dtype=dt).reshape(shape)
    if dt.kind == "U":
        chars = [chr(c) for c in range(0x20, 0x7f)] + ["é", "日", "🙂"]
        words = ["".join(rng.choice(chars, rng.integers(0, dt.itemsize // 4 + 1))) for _ in range(n)]
        return np.array(words, dtype=dt).reshape(shape)
    return rng.integers(-10**12, 10**12, n).astype("i8").view(dt).reshape(shape)

i = 0
for d, (shape, chunks) in itertools.product(dtypes, shapes):
    i += 1
    # Spread the other axes over the combinations instead of multiplying them.
    comp = compressors[i % len(compressors)]
    order = "CF"[(i // 4) % 2]
    sep = "./"[(i // 2) % 2]
    partial = i % 3 == 0
    dt = np.dtype(d)
    kf = fills[dt.kind]
    fill = kf[i % len(kf)] if partial or i % 5 else None
    name = "a%03d" % i
    z = g.create_dataset(name, shape=shape, chunks=chunks, dtype=dt, compressor=comp, order=order,
                         fill_value=fill, dimension_separator=sep)
    a = data(dt, shape)
    if partial and len(shape) > 0 and shape[0] > 1:
        z[: shape[0] // 2] = a[: shape[0] // 2]
    else:
        z[...] = a
    b = z[...]
    ref = np.ascontiguousarray(np.asarray(b).astype(b.dtype.newbyteorder("<"))).tobytes()
    open(f"{refdir}/{name}.bin", "wb").write(ref)
    print(json.dumps({"name": name, "dtype": d, "shape": list(shape), "compressor": comp.codec_id if comp else None,
                      "order": order, "sep": sep, "partial": partial}))
`

func TestPeerPythonWritesV2(t *testing.T) {
	peertest.NeedPython(t)
	root, refs := t.TempDir(), t.TempDir()
	out := peertest.RunPython(t, pythonWriteV2, root, refs)
	ctx := context.Background()
	st, err := dir.Open(root, dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, st, Options{CacheSize: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	children, err := h.Children(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(children) != len(lines) {
		t.Errorf("Children: %d nodes, python wrote %d arrays", len(children), len(lines))
	}
	for _, line := range lines {
		var c struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("python output %q: %v", line, err)
		}
		t.Run(c.Name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(refs, c.Name+".bin"))
			if err != nil {
				t.Fatal(err)
			}
			n, err := h.Node(ctx, c.Name)
			if err != nil {
				t.Fatal(err)
			}
			if n.Err != nil || n.Array == nil || n.Array.Err != nil {
				t.Fatalf("%s: node error %v, array %+v", line, n.Err, n.Array)
			}
			a := n.Array
			if a.Size() != int64(len(want)) {
				t.Fatalf("%s: Size %d, python has %d bytes", line, a.Size(), len(want))
			}
			got := make([]byte, len(want))
			if k, err := a.ReadAt(ctx, got, 0); k != len(want) || err != nil && len(want) > 0 {
				t.Fatalf("%s: ReadAt = %d, %v", line, k, err)
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: content differs from python's z[...]", line)
			}
		})
	}
}

// pythonReadV2 reads each array NAME of the store and compares it, as
// little-endian C-order bytes, with NAME.bin; it prints one line per array.
const pythonReadV2 = `
import sys, json, numpy as np, zarr
root, refdir, names = sys.argv[1], sys.argv[2], sys.argv[3:]
g = zarr.open_group(zarr.DirectoryStore(root), mode="r")
for name in names:
    try:
        b = g[name][...]
        got = np.ascontiguousarray(np.asarray(b).astype(b.dtype.newbyteorder("<"))).tobytes()
        want = open(f"{refdir}/{name}.bin", "rb").read()
        print(name, "ok" if got == want else "differs: %d vs %d bytes" % (len(got), len(want)))
    except Exception as e:
        print(name, "error:", repr(e).replace("\n", " "))
`

func TestPeerPythonReadsV2(t *testing.T) {
	peertest.NeedPython(t)
	ctx := context.Background()
	root, refs := t.TempDir(), t.TempDir()
	st, err := dir.Open(root, dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if err := CreateGroup(ctx, st, "", GroupMeta{Format: FormatV2, Attributes: map[string]any{"title": "engine"}}); err != nil {
		t.Fatal(err)
	}
	type tc struct {
		dtype        string
		shape, chunk []int64
		order, sep   string
		comp         *CodecSpec
		fill         any
	}
	gz := &CodecSpec{Name: "gzip", Configuration: map[string]any{"level": 1}}
	zl := &CodecSpec{Name: "zlib", Configuration: map[string]any{"level": 1}}
	zs := &CodecSpec{Name: "zstd", Configuration: map[string]any{"level": 1}}
	cases := []tc{
		{"<f4", []int64{7, 5}, []int64{3, 2}, "C", ".", nil, 0.0},
		{">f8", []int64{7, 5}, []int64{3, 2}, "F", "/", gz, "NaN"},
		{"<i2", []int64{10}, []int64{4}, "C", "/", zl, -5},
		{">i8", []int64{3, 4, 5}, []int64{2, 3, 2}, "F", ".", zs, 1},
		{"|u1", []int64{0, 3}, []int64{2, 2}, "C", ".", nil, 0},
		{"|b1", []int64{5, 5}, []int64{2, 5}, "F", ".", gz, true},
		{"<c8", []int64{4, 3}, []int64{3, 3}, "C", ".", nil, []any{1.0, -2.0}},
		{">U3", []int64{5}, []int64{2}, "C", ".", zs, "ab"},
		{"|S4", []int64{2, 3}, []int64{1, 2}, "F", "/", nil, "YWI="},
		{"<M8[ns]", []int64{6}, []int64{4}, "C", ".", nil, 0},
		{"<f2", []int64{}, []int64{}, "C", ".", nil, "Infinity"},
		{"<u8", []int64{2, 3, 2, 2}, []int64{1, 2, 2, 1}, "F", "/", zl, uint64(18446744073709551615)},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	var names []string
	for i, c := range cases {
		name := fmt.Sprintf("w%02d", i)
		names = append(names, name)
		a, err := CreateArray(ctx, st, name, ArrayMeta{Format: FormatV2, Shape: c.shape, ChunkShape: c.chunk, DataType: c.dtype,
			FillValue: c.fill, Order: c.order, DimensionSeparator: c.sep, Compressor: c.comp})
		if err != nil {
			t.Fatalf("%s %+v: %v", name, c, err)
		}
		data := make([]byte, a.Size())
		for j := range data {
			data[j] = byte(rng.IntN(256))
		}
		sanitise(a.DataType(), data)
		// Write the first half only, so python reads the fill value too.
		half := a.Size() / 2 / int64(a.DataType().Size) * int64(a.DataType().Size)
		if i%2 == 0 {
			half = a.Size()
		}
		if _, err := a.WriteAt(ctx, data[:half], 0); err != nil {
			t.Fatal(err)
		}
		want := make([]byte, a.Size())
		if _, err := a.ReadAt(ctx, want, 0); err != nil && a.Size() > 0 {
			t.Fatal(err)
		}
		if !bytes.Equal(want[:half], data[:half]) {
			t.Fatalf("%s: read back differs from what was written", name)
		}
		if err := os.WriteFile(filepath.Join(refs, name+".bin"), want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := peertest.RunPython(t, pythonReadV2, append([]string{root, refs}, names...)...)
	got := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(got) != len(names) {
		t.Fatalf("python printed %d lines for %d arrays:\n%s", len(got), len(names), out)
	}
	for i, line := range got {
		if line != names[i]+" ok" {
			t.Errorf("%s (%+v): python: %s", names[i], cases[i], line)
		}
	}
}

// sanitise makes random bytes valid elements of t (booleans 0/1, UTF-32
// code points in range, floats finite) so that both sides agree on them.
func sanitise(t DataType, b []byte) {
	switch {
	case t.Name == "bool":
		for i := range b {
			b[i] &= 1
		}
	case strings.HasPrefix(t.Name, "float"), strings.HasPrefix(t.Name, "complex"):
		// No NaNs: NumPy may quiet a signalling NaN while swapping bytes.
		unit := t.Size
		if strings.HasPrefix(t.Name, "complex") {
			unit /= 2
		}
		for i := unit - 1; i < len(b); i += unit {
			b[i] &= 0x3f
		}
	case t.Name == "fixed_length_utf32":
		for i := 0; i+4 <= len(b); i += 4 {
			b[i+2], b[i+3] = 0, 0
			if b[i] == 0 && b[i+1] == 0 {
				b[i] = 'x'
			}
		}
	}
}
