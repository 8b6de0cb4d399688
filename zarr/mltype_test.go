package zarr

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// TestPeerMLTypeValues: the element decoder of every ML type (what
// preview.png widens with) gives NumPy's value for every code.
func TestPeerMLTypeValues(t *testing.T) {
	peertest.NeedPython(t)
	var want map[string][]any
	if err := json.Unmarshal(peertest.Oracle(t, "zarr/ml_values_numpy.py"), &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != 16 {
		t.Fatalf("NumPy computed %d types, want 16", len(want))
	}
	for name, vals := range want {
		dec, ok := meta.MLElement(name)
		if !ok {
			t.Errorf("%s: no decoder", name)
			continue
		}
		bad := 0
		for code, w := range vals {
			b := []byte{byte(code), byte(code >> 8)}
			got := dec(b)
			var ok bool
			switch w := w.(type) {
			case nil:
				ok = math.IsNaN(got)
			case string:
				ok = math.IsInf(got, map[string]int{"inf": 1, "-inf": -1}[w])
			case float64:
				ok = got == w && (w != 0 || math.Signbit(got) == math.Signbit(w))
			}
			if !ok && bad < 3 {
				t.Errorf("%s: code %#x decodes to %v, NumPy %v", name, code, got, w)
				bad++
			}
		}
	}
}

// TestPeerMLTypesRead reads the arrays of the oracle zarr/write_ml.py: `data` holds the
// stored element bytes little-endian, missing chunks the fill value in
// the type's own bits; info names the types (ml_dtypes's names where
// NumPy has none).
func TestPeerMLTypesRead(t *testing.T) {
	peertest.NeedPython(t)
	root, refs := t.TempDir(), t.TempDir()
	peertest.Oracle(t, "zarr/write_ml.py", root, refs)
	v2, v3 := openDir(t, filepath.Join(root, "v2")), openDir(t, filepath.Join(root, "v3"))
	for _, c := range []struct{ path, name, numpy string }{
		{"megatron", "bfloat16", "bfloat16"},
		{"tsstruct", "struct", "[('w', 'bfloat16'), ('q', 'int4', (2,)), ('s', '<f4'), ('e', 'float8_e4m3fn')]"},
		{"mlstruct", "struct", "[('w', 'bfloat16'), ('e', 'float8_e5m2'), ('s', '<f4')]"},
		{"bf16", "bfloat16", "bfloat16"},
		{"f8", "float8_e4m3", "float8_e4m3"},
		{"i4", "int4", "int4"},
		{"cf32", "complex64", "<c8"},
	} {
		want, err := os.ReadFile(filepath.Join(refs, c.path+".bin"))
		must(t, err)
		h := v3
		if c.path == "megatron" || c.path == "tsstruct" {
			h = v2
		}
		n, got := readArray(t, h, c.path)
		if !bytes.Equal(got, want) {
			t.Errorf("%s: data % x\nwant % x", c.path, got, want)
		}
		dt := n.Array.DataType()
		if dt.Name != c.name || dt.NumPy != c.numpy {
			t.Errorf("%s: data type %+v, want %s (%s)", c.path, dt, c.name, c.numpy)
		}
		// No data.npy for ML types, nor for records with an ML field.
		if dt.HasNumPyType() != strings.HasPrefix(c.numpy, "<") {
			t.Errorf("%s: HasNumPyType %v", c.path, dt.HasNumPyType())
		}
	}
	// The bfloat16 NaN fill is the README's 0x7fc0, widened to a NaN.
	_, got := readArray(t, v3, "bf16")
	dec, _ := meta.MLElement("bfloat16")
	if v := binary.LittleEndian.Uint16(got[len(got)-2:]); v != 0x7fc0 || !math.IsNaN(dec(got[len(got)-2:])) {
		t.Errorf("bf16 fill %#x", v)
	}
}
