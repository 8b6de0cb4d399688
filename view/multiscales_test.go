package view

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/zarr"
)

// These tests check previews of OME-Zarr pyramids: the level a preview is
// drawn from, and the multiscales metadata as groups write it.

// TestPreviewPyramid: every level of an OME-Zarr pyramid (0.4 in .zattrs,
// 0.5 under "ome" in zarr.json) is drawn from the smallest level that
// covers 512 pixels, even level 0, which is over the budget; an array over
// the budget outside a pyramid has no preview.
func TestPreviewPyramid(t *testing.T) {
	datasets := []any{map[string]any{"path": "0"}, map[string]any{"path": "1"}, map[string]any{"path": "2"}, map[string]any{"path": "3"}}
	for _, format := range []zarr.Format{zarr.FormatV2, zarr.FormatV3} {
		st := memory.New()
		ctx := context.Background()
		attrs := map[string]any{"multiscales": []any{map[string]any{"version": "0.4", "datasets": datasets}}}
		dtype := "|u1"
		if format == zarr.FormatV3 {
			attrs = map[string]any{"ome": map[string]any{"version": "0.5", "multiscales": []any{map[string]any{"datasets": datasets}}}}
			dtype = "uint8"
		}
		if err := zarr.CreateGroup(ctx, st, "", zarr.GroupMeta{Format: format}); err != nil {
			t.Fatal(err)
		}
		if err := zarr.CreateGroup(ctx, st, "img", zarr.GroupMeta{Format: format, Attributes: attrs}); err != nil {
			t.Fatal(err)
		}
		for lvl, side := range []int64{2048, 1024, 600, 300} {
			var data []byte
			if side == 600 {
				data = make([]byte, side*side)
				for i := range data {
					data[i] = byte(i / int(side) / 3)
				}
			}
			writeArray(t, st, "img/"+string(rune('0'+lvl)), zarr.ArrayMeta{Format: format, Shape: []int64{side, side}, ChunkShape: []int64{256, 256}, DataType: dtype, FillValue: 0}, data)
		}
		writeArray(t, st, "big", zarr.ArrayMeta{Format: format, Shape: []int64{2048, 2048}, ChunkShape: []int64{256, 256}, DataType: dtype, FillValue: 0}, nil)
		cfg := Config{Previews: true, PreviewBudget: 1 << 20}
		if previewOf(t, st, "big", cfg) != nil {
			t.Errorf("v%d: big has a preview over the budget", format)
		}
		for lvl := range 4 {
			f := previewOf(t, st, "img/"+string(rune('0'+lvl)), cfg)
			if f == nil {
				t.Fatalf("v%d: level %d has no preview", format, lvl)
			}
			img := readPreview(t, f)
			// Level 2 (600 × 600) drawn: 512 × 512, rows rising.
			if img.Rect.Dx() != 512 || img.Rect.Dy() != 512 || img.ColorIndexAt(0, 0) != 1 || img.ColorIndexAt(0, 511) != 255 {
				t.Errorf("v%d: level %d: %v, corners %d %d", format, lvl, img.Rect, img.ColorIndexAt(0, 0), img.ColorIndexAt(0, 511))
			}
		}
	}
}

// TestChooseLevel picks among levels' plans.
func TestChooseLevel(t *testing.T) {
	lvl := func(side, cost int64) *plan { return &plan{H: side, W: side, cost: cost} }
	for _, c := range []struct {
		name   string
		plans  []*plan
		budget int64
		want   int // index; -1 for none
	}{
		{"smallest covering", []*plan{lvl(4096, 100), lvl(2048, 50), lvl(1024, 20), lvl(512, 5), lvl(256, 1)}, 1000, 3},
		{"covering over budget: smallest", []*plan{lvl(4096, 100), lvl(2048, 50), lvl(256, 1)}, 10, 2},
		{"pyramid under 512 px: its largest level", []*plan{lvl(300, 3), lvl(150, 1)}, 10, 0},
		{"all over budget", []*plan{lvl(4096, 100), lvl(2048, 50)}, 10, -1},
		{"levels without plans", []*plan{nil, lvl(1024, 5), nil}, 10, 1},
	} {
		got := chooseLevel(c.plans, c.budget)
		want := (*plan)(nil)
		if c.want >= 0 {
			want = c.plans[c.want]
		}
		if got != want {
			t.Errorf("%s: chose %v, want %v", c.name, got, want)
		}
	}
}

// FuzzMultiscales: any attributes parse without panicking, to paths that
// stay inside the group.
func FuzzMultiscales(f *testing.F) {
	f.Add([]byte(`{"multiscales":[{"version":"0.4","datasets":[{"path":"0"},{"path":"1"}]}]}`))
	f.Add([]byte(`{"ome":{"version":"0.5","multiscales":[{"datasets":[{"path":"s0"},{"path":"../x"},{"path":"/abs"}]}]}}`))
	f.Add([]byte(`{"multiscales":7,"ome":{"multiscales":[{"datasets":[{"path":"a/./b/"}]}]}}`))
	f.Fuzz(func(t *testing.T, attrs []byte) {
		for _, paths := range multiscales(attrs) {
			for _, p := range paths {
				if p == "" || strings.HasPrefix(p, "/") || slices.Contains(strings.Split(p, "/"), "..") || slices.Contains(strings.Split(p, "/"), "") {
					t.Errorf("path %q from %s", p, attrs)
				}
			}
		}
	})
}
