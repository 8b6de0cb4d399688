package zarr

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/store/memory"
)

var update = flag.Bool("update", false, "rewrite golden files in testdata/")

func TestInfo(t *testing.T) {
	ctx := context.Background()
	st := memory.New()
	if err := CreateGroup(ctx, st, "", GroupMeta{Format: FormatV3, Attributes: map[string]any{"title": "demo"}}); err != nil {
		t.Fatal(err)
	}
	_, err := CreateArray(ctx, st, "temp", ArrayMeta{Format: FormatV3, Shape: []int64{10, 20}, ChunkShape: []int64{5, 5},
		DataType: "float32", FillValue: "NaN", DimensionNames: []string{"y", "x"}, Attributes: map[string]any{"units": "K"},
		Codecs: []CodecSpec{{Name: "bytes", Configuration: map[string]any{"endian": "little"}}, {Name: "gzip", Configuration: map[string]any{"level": 1}}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := CreateGroup(ctx, st, "v2", GroupMeta{Format: FormatV3}); err != nil {
		t.Fatal(err)
	}
	if err := st.Set(ctx, "broken/zarr.json", []byte(`{"zarr_format": 3, "node_type": "array", "shape": [-1]}`)); err != nil {
		t.Fatal(err)
	}
	h, err := Open(ctx, st, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var text strings.Builder
	for _, p := range []string{"", "temp", "broken"} {
		n, err := h.Node(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		info := n.Info()
		text.WriteString(info.Text())
		text.WriteString("--\n")
		enc := json.NewEncoder(&text)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(info); err != nil {
			t.Fatal(err)
		}
		text.WriteString("==\n")
	}
	golden := filepath.Join("testdata", "info.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(text.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if text.String() != string(want) {
		t.Errorf("Info differs from %s (run with -update to accept):\n%s", golden, text.String())
	}
}

func TestCorruptChunkError(t *testing.T) {
	ctx := context.Background()
	st := memory.NewNamed("test")
	if err := CreateGroup(ctx, st, "", GroupMeta{Format: FormatV2}); err != nil {
		t.Fatal(err)
	}
	a, err := CreateArray(ctx, st, "g/a", ArrayMeta{Format: FormatV2, Shape: []int64{4}, ChunkShape: []int64{2}, DataType: "<i4",
		Compressor: &CodecSpec{Name: "zlib", Configuration: map[string]any{"level": 1}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Set(ctx, "g/a/1", []byte("not zlib")); err != nil {
		t.Fatal(err)
	}
	_, err = a.ReadAt(ctx, make([]byte, 16), 0)
	if !errors.Is(err, ErrCorrupt) {
		t.Fatalf("ReadAt of a corrupt chunk: %v, want ErrCorrupt", err)
	}
	for _, part := range []string{"memory test", `"/g/a"`, `"g/a/1"`} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q does not name %s", err, part)
		}
	}
	// The first chunk alone still reads (as the fill value).
	if _, err := a.ReadAt(ctx, make([]byte, 8), 0); err != nil {
		t.Errorf("ReadAt of the missing first chunk: %v", err)
	}
}
