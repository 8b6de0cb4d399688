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

func TestPeerPythonWritesV2(t *testing.T) {
	peertest.NeedPython(t)
	root, refs := t.TempDir(), t.TempDir()
	out := peertest.Oracle(t, "zarr/write_v2.py", root, refs)
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
	out := peertest.Oracle(t, "zarr/read_v2.py", append([]string{root, refs}, names...)...)
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
