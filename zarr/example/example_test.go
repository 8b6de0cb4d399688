package example

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/zarr"
)

// readAll reads the whole content of the array at path.
func readAll(t *testing.T, h *zarr.Hierarchy, path string) (*zarr.Node, []byte) {
	t.Helper()
	ctx := context.Background()
	n, err := h.Node(ctx, path)
	if err != nil {
		t.Fatalf("node %s: %v", path, err)
	}
	if n.Err != nil || n.Array == nil || n.Array.Err != nil {
		t.Fatalf("node %s is not a readable array: %v %+v", path, n.Err, n.Array)
	}
	buf := make([]byte, n.Array.Size())
	if k, err := n.Array.ReadAt(ctx, buf, 0); k != len(buf) {
		t.Fatalf("read %s: %d of %d bytes: %v", path, k, len(buf), err)
	}
	return n, buf
}

func writeExample(t *testing.T) *zarr.Hierarchy {
	t.Helper()
	ctx := context.Background()
	st := memory.New()
	if err := Write(ctx, st); err != nil {
		t.Fatal(err)
	}
	h, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestExampleContent(t *testing.T) {
	h := writeExample(t)

	n, data := readAll(t, h, "temperature")
	if got := strings.Join(n.Array.DimensionNames(), ","); got != "time,lat,lon" {
		t.Errorf("dimension names %q", got)
	}
	var attrs map[string]any
	if err := json.Unmarshal(n.Attributes, &attrs); err != nil || attrs["units"] != "K" {
		t.Errorf("temperature attributes %s (%v)", n.Attributes, err)
	}
	for _, p := range [][3]int{{0, 0, 0}, {5, 44, 90}, {23, 89, 179}, {12, 45, 3}} {
		off := ((p[0]*NumLats+p[1])*NumLons + p[2]) * 4
		got := math.Float32frombits(binary.LittleEndian.Uint32(data[off:]))
		if want := Temperature(p[0], p[1], p[2]); got != want || got < 180 || got > 330 {
			t.Errorf("temperature%v = %v, want %v (a plausible K value)", p, got, want)
		}
	}

	_, img := readAll(t, h, "image")
	if got := int16(binary.LittleEndian.Uint16(img[(100*256+37)*2:])); got != Pixel(100, 37) {
		t.Errorf("image[100,37] = %d, want %d", got, Pixel(100, 37))
	}

	g, grav := readAll(t, h, "gravity")
	if len(g.Array.Shape()) != 0 || math.Float64frombits(binary.LittleEndian.Uint64(grav)) != 9.80665 {
		t.Errorf("gravity shape %v value % x", g.Array.Shape(), grav)
	}

	_, sparse := readAll(t, h, "sparse")
	for _, c := range []struct{ i, j int }{{0, 0}, {55, 52}, {99, 99}, {0, 99}, {42, 7}} {
		want := byte(SparseFill)
		if c.i/sparseChunk == c.j/sparseChunk {
			want = byte(c.i / sparseChunk)
		}
		if got := sparse[c.i*100+c.j]; got != want {
			t.Errorf("sparse[%d,%d] = %d, want %d", c.i, c.j, got, want)
		}
	}

}

// writeExampleDir writes the example into a directory and returns it.
func writeExampleDir(t *testing.T) string {
	t.Helper()
	path := t.TempDir()
	st, err := dir.Open(path, dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := Write(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return path
}

// openDir opens the hierarchy in the directory path.
func openDir(t *testing.T, path string) *zarr.Hierarchy {
	t.Helper()
	st, err := dir.Open(path, dir.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h, err := zarr.Open(context.Background(), st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestExampleV2Content(t *testing.T) {
	h := openDir(t, filepath.Join(writeExampleDir(t), V2Root))
	p, precip := readAll(t, h, "precipitation")
	if p.Format != zarr.FormatV2 || strings.Join(p.Array.DimensionNames(), ",") != "month,lat,lon" {
		t.Errorf("v2/precipitation format %v dims %v", p.Format, p.Array.DimensionNames())
	}
	if len(precip) != 12*30*60*8 {
		t.Errorf("precipitation size %d", len(precip))
	}
	_, counts := readAll(t, h, "counts")
	if got := binary.LittleEndian.Uint32(counts[7*4:]); got != 49000 {
		t.Errorf("counts[7] = %d, want 49000 (little-endian in data whatever the stored order)", got)
	}
	checkCodecGroup(t, h, "codecs")
}

func TestExampleCodecs(t *testing.T) {
	checkCodecGroup(t, writeExample(t), "codecs")
}

// checkCodecGroup checks that every array of group holds CodecSample.
func checkCodecGroup(t *testing.T, h *zarr.Hierarchy, group string) {
	t.Helper()
	children, err := h.Children(context.Background(), group)
	if err != nil {
		t.Fatal(err)
	}
	if len(children) < 2 {
		t.Errorf("%s holds %d arrays", group, len(children))
	}
	want := CodecSample()
	for _, c := range children {
		_, got := readAll(t, h, c.Path)
		if string(got) != string(want) {
			t.Errorf("%s reads back different content", c.Path)
		}
	}
}

func TestExampleDeterministic(t *testing.T) {
	ctx := context.Background()
	a, b := memory.New(), memory.New()
	if err := Write(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := Write(ctx, b); err != nil {
		t.Fatal(err)
	}
	keys, err := a.ListPrefix(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range keys {
		va, _ := a.Get(ctx, k)
		vb, err := b.Get(ctx, k)
		if err != nil || string(va) != string(vb) {
			t.Errorf("key %s differs between two writes (%v)", k, err)
		}
	}
}

// TestExampleV2Peer reads the v2 part of the example with python3-zarr.
func TestExampleV2Peer(t *testing.T) {
	peertest.NeedPython(t)
	path := filepath.Join(writeExampleDir(t), V2Root)
	out := peertest.Oracle(t, "zarr/example/example_v2_peer.py", path)
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	m, i, j := 3.0, 7.0, 11.0 // variables: the same rounding as in legacy()
	v := math.Max(0, 4*math.Sin(i/5+m/2)*math.Cos(j/9))
	want := []string{
		"(12, 30, 60) <f8 F ['month', 'lat', 'lon']",
		strings.TrimSpace(pyFloat(v)),
		"49000 >i4",
		"True",
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Errorf("python3-zarr reads\n%s\nwant\n%s", out, strings.Join(want, "\n"))
	}
}

// pyFloat formats v as Python's repr of a float does (shortest round trip).
func pyFloat(v float64) string {
	b, _ := json.Marshal(v)
	s := string(b)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}
