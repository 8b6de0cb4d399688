package zarr

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/n5"
)

// pythonWriteN5 writes an N5 container with zarr-python 2.13's N5Store
// (its N5ChunkWrapper writes default-mode blocks and attributes.json as
// the N5 spec has them): datasets compressed by each compressor it can
// express (raw, gzip, zlib, bzip2, xz, blosc), a group with attributes, a
// directory without attributes.json (an implicit group: "any directory
// on the file system is an N5 group"), and edge blocks. For each dataset
// it writes NAME.bin: the values in N5's axis order (the fastest first:
// zarr-python's array transposed), little-endian, as zarrfs's data holds
// them.
const pythonWriteN5 = `
import os, sys, shutil, numpy as np, zarr, numcodecs
root, ref = sys.argv[1], sys.argv[2]
s = zarr.N5Store(root)
g = zarr.group(store=s)
g.attrs["title"] = "n5 test"
rng = np.random.default_rng(5)
def ds(path, shape, chunks, dtype, compressor):
    a = g.create_dataset(path, shape=shape, chunks=chunks, dtype=dtype, compressor=compressor)
    v = (rng.standard_normal(shape) * 1000).astype(dtype) if np.dtype(dtype).kind == "f" else rng.integers(0, 200, shape).astype(dtype)
    a[...] = v
    open(os.path.join(ref, path.replace("/", "_") + ".bin"), "wb").write(np.ascontiguousarray(v.T).astype(np.dtype(dtype).newbyteorder("<")).tobytes())
ds("raw", (5, 7), (2, 3), ">u2", None)
ds("grp/gzip", (9, 4, 3), (4, 3, 2), ">f4", numcodecs.GZip(level=5))
ds("grp/zlib", (10,), (4,), ">i8", numcodecs.Zlib(level=1))
ds("bz2", (6, 6), (4, 4), ">f8", numcodecs.BZ2(level=9))
ds("xz", (6, 5), (5, 5), ">i4", numcodecs.LZMA(preset=3))
ds("blosc", (30, 20), (16, 16), ">u4", numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1))
ds("implicit/deep/u1", (11,), (4,), "|u1", None)
g["grp"].attrs["units"] = "m"
os.remove(os.path.join(root, "implicit", "attributes.json"))
`

// TestPeerN5Container: a container zarr-python writes reads through the
// registry's conversion of attributes.json (store/n5) as zarr-python
// reads it, with its groups, attributes and an implicit group.
func TestPeerN5Container(t *testing.T) {
	peertest.NeedPython(t)
	root, refs := t.TempDir(), t.TempDir()
	peertest.RunPython(t, pythonWriteN5, root, refs)
	ctx := context.Background()
	d, err := dir.Open(root, dir.Options{})
	must(t, err)
	st, ok, err := n5.Open(ctx, d)
	if err != nil || !ok {
		t.Fatalf("n5.Open: %v, %v", ok, err)
	}
	h, err := Open(ctx, st, Options{CacheSize: 1 << 20})
	must(t, err)
	for _, p := range []string{"raw", "grp/gzip", "grp/zlib", "bz2", "xz", "blosc", "implicit/deep/u1"} {
		want, err := os.ReadFile(filepath.Join(refs, strings.ReplaceAll(p, "/", "_")+".bin"))
		must(t, err)
		_, got := readArray(t, h, p)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: data differs from zarr-python's (%d bytes, want %d)", p, len(got), len(want))
		}
	}
	// The shape is N5's dimensions (zarr-python's reversed).
	n, err := h.Node(ctx, "raw")
	must(t, err)
	if s := n.Array.Shape(); len(s) != 2 || s[0] != 7 || s[1] != 5 {
		t.Errorf("raw: shape %v, want [7 5]", s)
	}
	for _, c := range []struct{ path, attrs string }{{"", `{"title":"n5 test"}`}, {"grp", `{"units":"m"}`}, {"implicit", `{}`}} {
		n, err := h.Node(ctx, c.path)
		must(t, err)
		if n.Array != nil || n.Err != nil {
			t.Errorf("%q: not a group: %v", c.path, n.Err)
			continue
		}
		var got, want any
		json.Unmarshal(n.Attributes, &got)
		json.Unmarshal([]byte(c.attrs), &want)
		if b1, b2 := mustJSON(got), mustJSON(want); b1 != b2 {
			t.Errorf("%q: attributes %s, want %s", c.path, b1, b2)
		}
	}
	kids, err := h.Children(ctx, "")
	must(t, err)
	var names []string
	for _, k := range kids {
		names = append(names, k.Name())
	}
	if mustJSON(names) != `["blosc","bz2","grp","implicit","raw","xz"]` {
		t.Errorf("root children %v", names)
	}
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
