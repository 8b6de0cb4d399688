package view

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"os"
	"strings"
	"testing"
)

// golden compares got with testdata/name (rewriting it with -update).
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := "testdata/" + name
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s: %d bytes differ from the golden file's %d (go test -run %s -update rewrites it)", name, len(got), len(want), t.Name())
	}
}

// TestViridisGolden compares the colour map with matplotlib's viridis at
// 256 levels, rounded to 8 bits (testdata/viridis.golden, printed by
// matplotlib 3.6: cm.get_cmap("viridis", 256)), and checks that its
// luminance rises from the first entry to the last.
func TestViridisGolden(t *testing.T) {
	var b strings.Builder
	for _, c := range viridis {
		fmt.Fprintf(&b, "%d %d %d\n", c[0], c[1], c[2])
	}
	want, err := os.ReadFile("testdata/viridis.golden")
	if err != nil {
		t.Fatal(err)
	}
	if b.String() != string(want) {
		t.Error("viridis differs from testdata/viridis.golden")
	}
	lum := func(c [3]uint8) float64 { return 0.299*float64(c[0]) + 0.587*float64(c[1]) + 0.114*float64(c[2]) }
	for k := 16; k < 256; k += 16 {
		if lum(viridis[k]) <= lum(viridis[k-16]) {
			t.Errorf("luminance of entry %d (%.1f) not above entry %d's (%.1f)", k, lum(viridis[k]), k-16, lum(viridis[k-16]))
		}
	}
}

// TestPNGGolden encodes small palette images and compares the bytes with
// golden files; image/png decodes them to the pixels encoded.
func TestPNGGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		img  paletteImage
	}{
		{"png-3x2-transparent.golden", paletteImage{w: 3, h: 2, pix: []uint8{0, 1, 2, 2, 1, 0},
			palette: [][3]uint8{{0, 0, 0}, {255, 0, 0}, {0, 0, 255}}, transparent: true}},
		{"png-1x1.golden", paletteImage{w: 1, h: 1, pix: []uint8{1}, palette: [][3]uint8{{255, 255, 255}, {68, 1, 84}}}},
	} {
		b := encodePNG(&c.img)
		golden(t, c.name, b)
		checkDecodes(t, &c.img, b)
	}
}

// checkDecodes decodes b with image/png and compares with m.
func checkDecodes(t *testing.T, m *paletteImage, b []byte) {
	t.Helper()
	if int64(len(b)) != pngSize(m.w, m.h, len(m.palette), m.transparent) {
		t.Fatalf("%d×%d: %d bytes, pngSize %d", m.w, m.h, len(b), pngSize(m.w, m.h, len(m.palette), m.transparent))
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("%d×%d: image/png: %v", m.w, m.h, err)
	}
	if got := img.Bounds(); got != image.Rect(0, 0, m.w, m.h) {
		t.Fatalf("bounds %v, want %d×%d", got, m.w, m.h)
	}
	for y := range m.h {
		for x := range m.w {
			k := m.pix[y*m.w+x]
			want := color.NRGBA{m.palette[k][0], m.palette[k][1], m.palette[k][2], 255}
			if k == 0 && m.transparent {
				want.A = 0
			}
			if got := color.NRGBAModel.Convert(img.At(x, y)).(color.NRGBA); got != want && !(want.A == 0 && got.A == 0) {
				t.Fatalf("pixel (%d, %d): %v, want %v", x, y, got, want)
			}
		}
	}
}

// TestPNGSizes checks pngSize and the stored blocks across their 64 KiB
// boundaries, up to the largest preview.
func TestPNGSizes(t *testing.T) {
	for _, wh := range [][2]int{{1, 1}, {512, 1}, {1, 512}, {255, 256}, {256, 255}, {256, 256}, {257, 255}, {300, 218}, {512, 512}} {
		m := &paletteImage{w: wh[0], h: wh[1], pix: make([]uint8, wh[0]*wh[1]), palette: planePalette, transparent: true}
		for i := range m.pix {
			m.pix[i] = uint8(i * 7)
		}
		checkDecodes(t, m, encodePNG(m))
	}
}
