package zarr

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// pythonWriteDraft writes a v3 draft hierarchy with zarr-python 2.13's
// experimental v3 API: an explicit root group with attributes, explicit
// and implicit groups, arrays across data types (extension types
// included), compressors (gzip, blosc, none), chunk memory layouts, chunk
// separators and partly written arrays. For each array it writes
// NAME.bin (the array as little-endian C-order bytes, or for object arrays
// its elements as a JSON list) and prints one JSON line.
const pythonWriteDraft = `
import os, sys, json, numpy as np
os.environ["ZARR_V3_EXPERIMENTAL_API"] = "1"
import zarr, numcodecs
root, refdir = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(7)
g = zarr.open_group(root, mode="w", zarr_version=3)
g.attrs["title"] = "draft"
g.create_group("explicit").attrs["k"] = 1
comps = [numcodecs.GZip(level=1), numcodecs.Blosc(cname="zstd", clevel=1, shuffle=2), None,
         numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1)]
cases = [("<f4", (5, 4), (2, 3), 1.5), (">i2", (7,), (3,), 0), ("<c8", (4, 3), (3, 2), complex("nan+1j")),
         (">c16", (3, 3), (2, 2), complex(2, -1)), ("<M8[ns]", (6,), (4,), 5), (">m8[s]", (2, 5), (1, 2), -3),
         ("|S5", (4,), (3,), b"ab"), ("<U3", (3, 2), (2, 2), "xy"), (">U2", (5,), (2,), ""), ("bool", (9,), (4,), True),
         ("<f2", (6,), (4,), float("-inf")), ("|u1", (3, 4, 5), (2, 3, 2), 9), ("<f8", (), (), float("nan")),
         ("<i8", (0, 3), (2, 2), 1), ("|i1", (10,), (10,), -1)]
for i, (d, shape, chunks, fill) in enumerate(cases):
    name = ("explicit/" if i % 3 == 0 else "implicit/deep/" if i % 3 == 1 else "") + "a%02d" % i
    dt = np.dtype(d)
    z = g.create_dataset(name, shape=shape, chunks=chunks, dtype=dt, compressor=comps[i % len(comps)],
                         order="CF"[(i // 2) % 2], fill_value=fill, dimension_separator="/." [i % 2])
    n = int(np.prod(shape))
    a = np.frombuffer(rng.integers(0, 256, n * dt.itemsize, dtype=np.uint8).tobytes(), dtype=dt).reshape(shape)
    if dt.kind == "U":
        a = np.array(["".join(chr(0x41 + (k + j) % 50) for j in range(k % (dt.itemsize // 4 + 1))) for k in range(n)], dtype=dt).reshape(shape)
    if dt.kind == "b":
        a = a.view("u1") % 2 == 1
    if dt.kind in "fc":
        a = rng.standard_normal(shape).astype(dt)
    if len(shape) > 0 and shape[0] > 1 and i % 2:
        z[: shape[0] // 2] = a[: shape[0] // 2]
    else:
        z[...] = a
    b = z[...]
    ref = np.ascontiguousarray(np.asarray(b).astype(b.dtype.newbyteorder("<"))).tobytes()
    open(f"{refdir}/{name.replace('/', '_')}.bin", "wb").write(ref)
    print(json.dumps({"name": name}))
z = zarr.create(shape=(5,), chunks=(2,), dtype=object, object_codec=numcodecs.VLenUTF8(), store=g.store,
                path="strings", zarr_version=3)
z[:3] = ["a", "", "日本\n"]
open(f"{refdir}/strings.json", "w").write(json.dumps([str(x) if x != 0 else "" for x in z[...]]))
`

func TestPeerPythonWritesDraft2022(t *testing.T) {
	peertest.NeedPython(t)
	root, refs := t.TempDir(), t.TempDir()
	out := peertest.RunPython(t, pythonWriteDraft, root, refs)
	ctx := context.Background()
	h := openDir(t, root)
	if h.Format() != FormatV3Draft2022 {
		t.Fatalf("Format = %v, want v3-draft-2022", h.Format())
	}
	rootNode, err := h.Node(ctx, "")
	if err != nil || rootNode.Err != nil {
		t.Fatalf("root: %v, %v", err, rootNode)
	}
	if got := strings.Join(docNames(rootNode), " "); got != "group.json zarr.json" {
		t.Errorf("root documents %q, want group.json zarr.json", got)
	}
	if !strings.Contains(string(rootNode.Attributes), `"draft"`) {
		t.Errorf("root attributes %s", rootNode.Attributes)
	}
	var kids []string
	children, err := h.Children(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range children {
		kids = append(kids, c.Name()+":"+c.Kind.String())
	}
	if got := strings.Join(kids, " "); !strings.HasPrefix(got, "a02:array a05:array") || !strings.Contains(got, "explicit:group implicit:group") || !strings.Contains(got, "strings:array") {
		t.Errorf("root children %q", got)
	}
	for _, p := range []string{"implicit", "implicit/deep"} {
		n, err := h.Node(ctx, p)
		if err != nil || n.Kind != KindGroup || len(n.Documents) != 0 || n.Err != nil {
			t.Errorf("implicit group %q: %v %+v", p, err, n)
		}
	}
	if n, err := h.Node(ctx, "explicit"); err != nil || n.Kind != KindGroup || strings.Join(docNames(n), " ") != "group.json" {
		t.Errorf("explicit group: %v %+v", err, n)
	}
	if _, err := h.Node(ctx, "nothing"); !errors.Is(err, ErrNotExist) {
		t.Errorf("missing node: %v, want ErrNotExist", err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var c struct{ Name string }
		if err := json.Unmarshal([]byte(line), &c); err != nil {
			t.Fatalf("python output %q: %v", line, err)
		}
		t.Run(strings.ReplaceAll(c.Name, "/", "_"), func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join(refs, strings.ReplaceAll(c.Name, "/", "_")+".bin"))
			if err != nil {
				t.Fatal(err)
			}
			n, got := readArray(t, h, c.Name)
			if !bytes.Equal(got, want) {
				t.Errorf("content differs from python's z[...]:\n got %x\nwant %x", got, want)
			}
			if strings.Join(docNames(n), " ") != "array.json" {
				t.Errorf("documents %v", docNames(n))
			}
		})
	}
	t.Run("strings", func(t *testing.T) {
		var want []string
		b, err := os.ReadFile(filepath.Join(refs, "strings.json"))
		if err != nil || json.Unmarshal(b, &want) != nil {
			t.Fatal(err)
		}
		n, err := h.Node(ctx, "strings")
		if err != nil || n.Array == nil || n.Array.Err != nil {
			t.Fatalf("strings: %v %+v", err, n)
		}
		var got []string
		if err := n.Array.Elements(ctx, func(e []byte) error { got = append(got, string(e)); return nil }); err != nil {
			t.Fatal(err)
		}
		if strings.Join(got, "|") != strings.Join(want, "|") {
			t.Errorf("elements %q, want %q", got, want)
		}
	})
}
