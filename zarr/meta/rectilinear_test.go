package meta

import (
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"github.com/zarrfs/zarrfs/codec"
)

func rectConfig(t testing.TB, doc string) codec.Config {
	t.Helper()
	var cfg codec.Config
	if err := json.Unmarshal([]byte(doc), &cfg); err != nil {
		t.Fatal(err)
	}
	return cfg
}

// TestParseRectilinear expands chunk_shapes as the README's example says
// ("shape": [6, 6, 6, 6, 6]: 4 "expands to [4, 4]", [1, 2, 3] "expands to
// itself", [[4, 2]] "expands to [4, 4]", [[1, 3], 3] "expands to [1, 1,
// 1, 3]", [4, 4, 4] "explicit list with overflow chunks": the chunk past
// the array is not one of its chunks) and refuses what it forbids.
func TestParseRectilinear(t *testing.T) {
	edges, err := parseRectilinear(rectConfig(t, `{"kind": "inline", "chunk_shapes": [4, [1, 2, 3], [[4, 2]], [[1, 3], 3], [4, 4, 4]]}`), []int64{6, 6, 6, 6, 6})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]int64{{0, 4, 8}, {0, 1, 3, 6}, {0, 4, 8}, {0, 1, 2, 3, 6}, {0, 4, 8}}
	for i := range want {
		if !slices.Equal(edges[i], want[i]) {
			t.Errorf("dimension %d: boundaries %v, want %v", i, edges[i], want[i])
		}
	}
	for _, c := range []struct {
		doc   string
		shape []int64
		want  error
	}{
		{`{"kind": "inline", "chunk_shapes": [[1, 2]]}`, []int64{4}, ErrInvalidMetadata},          // sums to 3 < 4
		{`{"kind": "inline", "chunk_shapes": [0]}`, []int64{4}, ErrInvalidMetadata},               // "MUST be positive"
		{`{"kind": "inline", "chunk_shapes": [[[2, 0]]]}`, []int64{4}, ErrInvalidMetadata},        // N ≥ 1
		{`{"kind": "inline", "chunk_shapes": [[[2, 1, 1]]]}`, []int64{2}, ErrInvalidMetadata},     // not a pair
		{`{"kind": "inline", "chunk_shapes": [2, 2]}`, []int64{4}, ErrInvalidMetadata},            // rank
		{`{"kind": "inline", "chunk_shapes": ["2"]}`, []int64{4}, ErrInvalidMetadata},             // not a number
		{`{"kind": "file", "chunk_shapes": [2]}`, []int64{4}, codec.ErrUnsupported},               // another kind
		{`{"kind": "inline", "chunk_shapes": [2], "x": 1}`, []int64{4}, ErrInvalidMetadata},       // unknown member
		{`{"kind": "inline", "chunk_shapes": [1]}`, []int64{1 << 40}, codec.ErrUnsupported},       // too many chunks
		{`{"kind": "inline", "chunk_shapes": [[9223372036854775807, 5]]}`, []int64{1 << 62}, nil}, // one chunk covers it
	} {
		_, err := parseRectilinear(rectConfig(t, c.doc), c.shape)
		if c.want == nil && err != nil || c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s %v: %v, want %v", c.doc, c.shape, err, c.want)
		}
	}
}

// FuzzParseRectilinear parses arbitrary configurations: an error, or
// boundaries that start at 0, rise, and cover the shape.
func FuzzParseRectilinear(f *testing.F) {
	f.Add(`{"kind": "inline", "chunk_shapes": [4, [1, 2, 3]]}`, int64(6), int64(6))
	f.Add(`{"kind": "inline", "chunk_shapes": [[[9223372036854775807, 9223372036854775807]], [[1, 3], 3]]}`, int64(1<<62), int64(6))
	f.Add(`{"kind": "inline", "chunk_shapes": [[[-1, 2]], []]}`, int64(0), int64(0))
	f.Fuzz(func(t *testing.T, doc string, n0, n1 int64) {
		if n0 < 0 || n1 < 0 || n0 > 1<<24 || n1 > 1<<24 {
			return
		}
		var cfg codec.Config
		if json.Unmarshal([]byte(doc), &cfg) != nil {
			return
		}
		edges, err := parseRectilinear(cfg, []int64{n0, n1})
		if err != nil {
			return
		}
		for i, e := range edges {
			if e[0] != 0 || e[len(e)-1] < []int64{n0, n1}[i] {
				t.Fatalf("dimension %d: %v", i, e)
			}
			for k := 1; k < len(e); k++ {
				if e[k] <= e[k-1] {
					t.Fatalf("dimension %d: %v does not rise", i, e)
				}
			}
		}
	})
}
