package zarr

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/dir"
)

// pythonReadCorpus reads every v2 array below the corpus with zarr-python
// and prints one JSON line each: its reference bytes (written to
// refdir/N.bin) or, for object arrays, its elements as hex (the JSON text
// of each for json2 and msgpack2 arrays), or the error.
const pythonReadCorpus = `
import sys, os, json, itertools, numpy as np, zarr
corpus, refdir = sys.argv[1], sys.argv[2]
n = 0
for d, dirs, files in sorted(os.walk(corpus)):
    dirs.sort()
    if ".zarray" not in files:
        continue
    n += 1
    rec = {"path": d}
    try:
        z = zarr.open_array(d, mode="r")
        a = np.array(z[...])
        if z.fill_value is None and a.dtype.kind != "O" and a.ndim > 0:
            # Missing chunks of an array without a fill value are undefined
            # in zarr-python (np.empty); zarrfs reads them as zeros.
            grid = [range(-(-s // c)) for s, c in zip(z.shape, z.chunks)]
            for idx in itertools.product(*grid):
                if z._chunk_key(idx) not in z.store:
                    a[tuple(slice(i * c, (i + 1) * c) for i, c in zip(idx, z.chunks))] = np.zeros((), dtype=a.dtype)
        oc = z.filters[0].codec_id if a.dtype.kind == "O" and z.filters else ""
        if oc in ("json2", "msgpack2"):
            # Object arrays: each element as JSON, as numcodecs writes it.
            rec["elems"] = [json.dumps(e, ensure_ascii=oc == "json2", separators=(",", ":"), sort_keys=oc == "json2").encode().hex() for e in a.ravel()]
        elif a.dtype.kind == "O":
            # Missing elements are the fill value (None or 0): zarrfs reads
            # them as empty.
            rec["elems"] = [(e.encode("utf-8") if isinstance(e, str) else bytes(e)).hex() if isinstance(e, (str, bytes)) else "" for e in a.ravel()]
        else:
            ref = np.ascontiguousarray(a.astype(a.dtype.newbyteorder("<"))).tobytes()
            rec["ref"] = "%s/%d.bin" % (refdir, n)
            open(rec["ref"], "wb").write(ref)
    except Exception as e:
        rec["error"] = repr(e)
    print(json.dumps(rec))
`

// TestCorpusV2 reads every v2 array of the public corpus and compares it
// with zarr-python's reading. Arrays the engine does not support must say
// so with ErrUnsupported.
func TestCorpusV2(t *testing.T) {
	corpus := peertest.Corpus(t)
	refs := t.TempDir()
	out := peertest.RunPython(t, pythonReadCorpus, corpus, refs)
	ctx := context.Background()
	var compared, unsupported []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var rec struct {
			Path  string    `json:"path"`
			Ref   string    `json:"ref"`
			Elems []*string `json:"elems"`
			Error string    `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("python output %q: %v", line, err)
		}
		rel, _ := filepath.Rel(corpus, rec.Path)
		if rec.Error != "" {
			t.Logf("%s: python cannot read it either: %s", rel, rec.Error)
			continue
		}
		st, err := dir.Open(rec.Path, dir.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		h, err := Open(ctx, st, Options{CacheSize: 4 << 20})
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		n, err := h.Node(ctx, "")
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if n.Err != nil || n.Array == nil {
			t.Errorf("%s: %v", rel, n.Err)
			continue
		}
		a := n.Array
		if a.Err != nil {
			if !errors.Is(a.Err, ErrUnsupported) {
				t.Errorf("%s: %v", rel, a.Err)
			}
			unsupported = append(unsupported, rel+": "+a.Err.Error())
			continue
		}
		if rec.Elems != nil {
			var got []*string
			err := a.Elements(ctx, func(e []byte) error {
				s := hex.EncodeToString(e)
				got = append(got, &s)
				return nil
			})
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				continue
			}
			if !slices.EqualFunc(got, rec.Elems, func(a, b *string) bool { return b != nil && *a == *b }) {
				t.Errorf("%s: elements differ from python's", rel)
			}
		} else {
			want, err := os.ReadFile(rec.Ref)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, a.Size())
			if k, err := a.ReadAt(ctx, got, 0); k != len(got) || err != nil && len(got) > 0 {
				t.Errorf("%s: ReadAt = %d, %v", rel, k, err)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: content differs from python's (%d bytes)", rel, len(want))
			}
		}
		compared = append(compared, rel)
	}
	t.Logf("compared %d arrays with python; unsupported here: %d\n%s", len(compared), len(unsupported), strings.Join(unsupported, "\n"))
	if len(compared) == 0 {
		t.Error("no corpus array compared")
	}
}
