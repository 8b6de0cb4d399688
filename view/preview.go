package view

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"path"
	"sort"
	"strings"
	"sync"

	"github.com/zarrfs/zarrfs/zarr"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// DefaultPreviewBudget is the default bound on the decoded chunks one
// preview reads (`--preview-budget`).
const DefaultPreviewBudget = 64 << 20

// Preview images: a plane is at most previewSide pixels on its longer
// side; a rank-1 array is a chartW × chartH line chart.
const (
	previewSide    = 512
	chartW, chartH = 512, 256
)

// errOverBudget is why a preview cannot be read: the array, or for a
// level of an OME-Zarr pyramid every level, is over the budget.
var errOverBudget = errors.New("view: over the preview budget")

// numericTypes maps the data types a preview draws to their element
// decoders: the element's little-endian bytes to a value (complex numbers
// to their magnitude).
var numericTypes = map[string]func([]byte) float64{
	"bool":    func(b []byte) float64 { return float64(min(b[0], 1)) },
	"int8":    func(b []byte) float64 { return float64(int8(b[0])) },
	"uint8":   func(b []byte) float64 { return float64(b[0]) },
	"int16":   func(b []byte) float64 { return float64(int16(binary.LittleEndian.Uint16(b))) },
	"uint16":  func(b []byte) float64 { return float64(binary.LittleEndian.Uint16(b)) },
	"int32":   func(b []byte) float64 { return float64(int32(binary.LittleEndian.Uint32(b))) },
	"uint32":  func(b []byte) float64 { return float64(binary.LittleEndian.Uint32(b)) },
	"int64":   func(b []byte) float64 { return float64(int64(binary.LittleEndian.Uint64(b))) },
	"uint64":  func(b []byte) float64 { return float64(binary.LittleEndian.Uint64(b)) },
	"float16": func(b []byte) float64 { return halfToFloat(binary.LittleEndian.Uint16(b)) },
	"float32": func(b []byte) float64 { return float64(math.Float32frombits(binary.LittleEndian.Uint32(b))) },
	"float64": func(b []byte) float64 { return math.Float64frombits(binary.LittleEndian.Uint64(b)) },
	"complex64": func(b []byte) float64 {
		return math.Hypot(float64(math.Float32frombits(binary.LittleEndian.Uint32(b))),
			float64(math.Float32frombits(binary.LittleEndian.Uint32(b[4:]))))
	},
	"complex128": func(b []byte) float64 {
		return math.Hypot(math.Float64frombits(binary.LittleEndian.Uint64(b)),
			math.Float64frombits(binary.LittleEndian.Uint64(b[8:])))
	},
}

// halfToFloat converts an IEEE 754 binary16 value.
func halfToFloat(h uint16) float64 {
	sign := 1.0
	if h&0x8000 != 0 {
		sign = -1
	}
	exp, frac := int(h>>10&0x1f), float64(h&0x3ff)
	switch exp {
	case 0:
		return sign * math.Ldexp(frac, -24)
	case 0x1f:
		if frac != 0 {
			return math.NaN()
		}
		return math.Inf(int(sign))
	}
	return sign * math.Ldexp(1+frac/1024, exp-15)
}

// A plan says what a preview draws, from metadata alone: which array,
// which elements, the image's size and the decoded bytes it costs.
type plan struct {
	a      *zarr.Array
	decode func([]byte) float64
	item   int64
	// A chart (rank 1) draws all n elements. A plane (rank ≥ 2) is the
	// H × W run of elements starting at element base, drawn as h × w
	// pixels.
	chart      bool
	n          int64
	base, H, W int64
	h, w       int
	cost       int64 // bytes of decoded chunks (or shards' inner chunks) read
}

// planFor returns the plan of a preview of a, or nil when a has none: its
// elements are not numbers, it has rank 0, or no elements.
func planFor(a *zarr.Array) *plan {
	decode := numericTypes[a.DataType().Name]
	if d, ok := meta.MLElement(a.DataType().Name); ok {
		decode = d // bfloat16, float8 …: widened as float32 widens
	}
	rank := len(a.Shape())
	if decode == nil || a.DataType().Size == 0 || rank == 0 || len(a.ChunkShape()) != rank {
		return nil
	}
	for i, d := range a.Shape() {
		if d <= 0 || a.ChunkShape()[i] <= 0 {
			return nil
		}
	}
	p := &plan{a: a, decode: decode, item: int64(a.DataType().Size)}
	unit := decodeUnit(a)
	unitBytes := p.item
	for _, d := range unit {
		unitBytes = mulSat(unitBytes, d)
	}
	if rank == 1 {
		p.chart, p.n, p.w, p.h = true, a.Shape()[0], chartW, chartH
		p.cost = mulSat(ceilDiv(p.n, unit[0]), unitBytes)
		return p
	}
	p.H, p.W = a.Shape()[rank-2], a.Shape()[rank-1]
	// The plane of the last two dimensions at the middle of the others:
	// one contiguous run of H × W elements in C order.
	stride := p.H * p.W
	for i := rank - 3; i >= 0; i-- {
		p.base += a.Shape()[i] / 2 * stride
		stride = mulSat(stride, a.Shape()[i])
	}
	p.h, p.w = imageSide(p.H, p.W), imageSide(p.W, p.H)
	// The rows drawn cross some rows of chunks (all of them, unless the
	// chunks are thinner than the step between rows); each of those is a
	// row of W / chunk width chunks.
	chunkRows := int64(0)
	last := int64(-1)
	for _, r := range p.rows() {
		if c := r / unit[rank-2]; c != last {
			chunkRows, last = chunkRows+1, c
		}
	}
	p.cost = mulSat(mulSat(chunkRows, ceilDiv(p.W, unit[rank-1])), unitBytes)
	return p
}

// decodeUnit returns the shape of what a read decodes as a whole: the
// inner chunks of a sharded array (a preview's reads are not sequential,
// so they decode only the inner chunks they need), else the chunks.
func decodeUnit(a *zarr.Array) []int64 {
	var codecs []struct {
		Name          string `json:"name"`
		Configuration struct {
			ChunkShape []int64 `json:"chunk_shape"`
		} `json:"configuration"`
	}
	if json.Unmarshal(a.Codecs(), &codecs) == nil && len(codecs) > 0 && codecs[0].Name == "sharding_indexed" {
		inner := codecs[0].Configuration.ChunkShape
		ok := len(inner) == len(a.ChunkShape())
		for _, d := range inner {
			ok = ok && d > 0
		}
		if ok {
			return inner
		}
	}
	return a.ChunkShape()
}

// imageSide returns the pixels of an image side showing n elements when
// the other side shows m: one per element, or scaled so that the longer
// side is previewSide (and no side is less than 1).
func imageSide(n, m int64) int {
	if n <= previewSide && m <= previewSide {
		return int(n)
	}
	longer := max(n, m)
	return int(max(mulDiv(n, previewSide, longer, longer/2), 1))
}

// mulDiv returns ⌊(a·b + r) / c⌋ for non-negative a, b, r and positive c,
// without overflow where the result fits (shapes can be near 2⁶³).
func mulDiv(a, b, c, r int64) int64 {
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	lo, carry := bits.Add64(lo, uint64(r), 0)
	q, _ := bits.Div64(hi+carry, lo, uint64(c))
	return int64(q)
}

// sample returns the element of n shown by each of k pixels: pixel i shows
// element ⌊(i + ½) · n / k⌋, the one under its centre.
func sample(n int64, k int) []int64 {
	s := make([]int64, k)
	for i := range s {
		s[i] = mulDiv(2*int64(i)+1, n, 2*int64(k), 0)
	}
	return s
}

func (p *plan) rows() []int64 { return sample(p.H, p.h) }

// size returns the length of the preview's PNG.
func (p *plan) size() int64 { return pngSize(p.w, p.h, len(planePalette), !p.chart) }

func ceilDiv(a, b int64) int64 { return (a + b - 1) / b }

// mulSat multiplies non-negative numbers, saturating at MaxInt64.
func mulSat(a, b int64) int64 {
	if a != 0 && b > math.MaxInt64/a {
		return math.MaxInt64
	}
	return a * b
}

// chooseLevel returns the plan of the level of an image pyramid a preview
// draws (plans in the pyramid's order, nil for levels without one): the
// smallest level within the budget that still covers the preview's
// previewSide pixels (or, in a pyramid smaller than that, all the pixels
// of its largest level), else the smallest level within the budget; nil
// when every level is over the budget.
func chooseLevel(plans []*plan, budget int64) *plan {
	target := int64(0)
	for _, p := range plans {
		if p != nil {
			target = max(target, min(max(p.H, p.W, p.n), previewSide))
		}
	}
	var covering, smallest *plan
	elems := func(p *plan) int64 { return mulSat(max(p.H, 1)*max(p.W, 1), max(p.n, 1)) }
	for _, p := range plans {
		if p == nil || p.cost > budget {
			continue
		}
		if max(p.H, p.W, p.n) >= target && (covering == nil || elems(p) < elems(covering)) {
			covering = p
		}
		if smallest == nil || elems(p) < elems(smallest) {
			smallest = p
		}
	}
	if covering != nil {
		return covering
	}
	return smallest
}

// previews returns the preview.png of the array n, or none:
// previews are off, its elements are not numbers, or it is over the
// budget and not a level of an OME-Zarr image pyramid (whose preview is
// then drawn from a smaller level).
func (v *Views) previews(n *zarr.Node) []File {
	if !v.cfg.Previews || n.Kind != zarr.KindArray || n.Array == nil {
		return nil
	}
	own := planFor(n.Array)
	if own == nil {
		return nil
	}
	if own.cost > v.cfg.PreviewBudget && pyramidOf(context.Background(), v.h, n) == nil {
		return nil
	}
	return []File{&previewFile{v: v, node: n}}
}

// previewFile is an array's preview.png. Its size is known from metadata;
// its bytes are rendered on the first read and kept for the file's life.
type previewFile struct {
	v    *Views
	node *zarr.Node

	planMu sync.Mutex
	p      *plan // the plan, once made

	// renderMu is held through a render, so that a file is rendered
	// once; stat (Size) takes only planMu and never waits for it.
	renderMu sync.Mutex
	png      []byte
}

func (f *previewFile) Name() string { return "preview.png" }

// plan returns what the preview draws: the array itself or, for a level
// of an OME-Zarr pyramid, the level chooseLevel picks (loading the other
// levels' metadata, not their chunks).
func (f *previewFile) plan(ctx context.Context) (*plan, error) {
	f.planMu.Lock()
	defer f.planMu.Unlock()
	if f.p != nil {
		return f.p, nil
	}
	own := planFor(f.node.Array)
	budget := f.v.cfg.PreviewBudget
	levels := pyramidOf(ctx, f.v.h, f.node)
	if levels == nil {
		if own.cost > budget {
			return nil, fmt.Errorf("array %q: preview: %w", "/"+f.node.Path, errOverBudget)
		}
		f.p = own
		return own, nil
	}
	plans := make([]*plan, len(levels))
	for i, path := range levels {
		if path == f.node.Path {
			plans[i] = own
			continue
		}
		l, err := f.v.h.Node(ctx, path)
		if err != nil && ctx.Err() != nil {
			return nil, err
		}
		if err == nil && l.Err == nil && l.Array != nil && l.Array.Err == nil && len(l.Array.Shape()) == len(own.a.Shape()) {
			plans[i] = planFor(l.Array)
		}
	}
	p := chooseLevel(plans, budget)
	if p == nil {
		return nil, fmt.Errorf("array %q: preview: every level of its image pyramid is %w", "/"+f.node.Path, errOverBudget)
	}
	f.p = p
	return p, nil
}

// Size is the PNG's length, known from the plan.
func (f *previewFile) Size(ctx context.Context) (int64, error) {
	p, err := f.plan(ctx)
	if err != nil {
		return 0, err
	}
	return p.size(), nil
}

// Check returns why the array drawn cannot be read, as data's Check does.
func (f *previewFile) Check(ctx context.Context) error {
	if f.node.Err != nil {
		return f.node.Err
	}
	p, err := f.plan(ctx)
	if err != nil {
		return err
	}
	return p.a.Err
}

// ReadAt renders the preview on the first read (one render per core at a
// time) and reads the PNG.
func (f *previewFile) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	f.renderMu.Lock()
	defer f.renderMu.Unlock()
	if f.png == nil {
		pl, err := f.plan(ctx)
		if err != nil {
			return 0, err
		}
		select {
		case f.v.renders <- struct{}{}:
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		flip := false
		if !pl.chart && pl.a == f.node.Array {
			flip = rowsRunNorth(ctx, f.v.h, f.node)
		}
		img, err := pl.render(ctx)
		<-f.v.renders
		if err == nil && flip {
			img.flipRows()
		}
		if err != nil {
			return 0, err
		}
		f.png = encodePNG(img)
	}
	return readBytes(f.png, p, off)
}

// rowsRunNorth reports whether the rows of array n's plane run from south
// to north, so that its preview, drawn north up, shows them bottom to top:
// the plane's row dimension (the second last) has a 1-D coordinate array
// in n's group, named as the dimension, that points north (CF latitude by
// standard_name, units or name, as data.hdr's map info finds it; a
// projection_y_coordinate; or axis "Y") and whose last value is greater
// than its first. Only those two values are read. Without such a
// coordinate, row 0 is at the top, as in every image format.
func rowsRunNorth(ctx context.Context, h *zarr.Hierarchy, n *zarr.Node) bool {
	a := n.Array
	shape := a.Shape()
	rank := len(shape)
	dims := a.DimensionNames()
	if len(dims) == 0 {
		dims = attrDimensions(n.OrderedAttributes(), rank)
	}
	if h == nil || rank < 2 || len(dims) != rank || dims[rank-2] == "" || shape[rank-2] < 2 {
		return false
	}
	name, rows := dims[rank-2], shape[rank-2]
	c, err := h.Node(ctx, strings.TrimPrefix(path.Join(path.Dir("/"+n.Path), name), "/"))
	if err != nil || c.Kind != zarr.KindArray || c.Array == nil || c.Array.Err != nil ||
		len(c.Array.Shape()) != 1 || c.Array.Shape()[0] != rows {
		return false
	}
	t, ok := elemOf(c.Array.DataType())
	if !ok || !t.numeric() || t.kind == 'b' {
		return false
	}
	co := &coordinate{attrs: c.OrderedAttributes()}
	std, axis := co.attr("standard_name"), co.attr("axis")
	co.values = []float64{0}
	if !co.is(name, true) && std != "projection_y_coordinate" && axis != "Y" && axis != "y" {
		return false
	}
	buf := make([]byte, 2*t.size)
	if c.Array.ReadOrthogonal(ctx, [][]int64{{0, rows - 1}}, buf) != nil {
		return false
	}
	first, _ := t.value(buf)
	last, _ := t.value(buf[t.size:])
	return last > first
}

// Preview images are palette PNGs: entry 0 is a plane's transparent pixel
// (NaN, ±Inf) or a chart's white background; entries 1 to 255 are viridis
// from the lowest value to the highest.
var planePalette, chartPalette = palettes()

func palettes() (plane, chart [][3]uint8) {
	plane = make([][3]uint8, 256)
	for k := 1; k < 256; k++ {
		plane[k] = viridis[((k-1)*255+127)/254]
	}
	chart = append([][3]uint8{{255, 255, 255}}, plane[1:]...)
	return plane, chart
}

// colour returns the palette entry of t in [0, 1].
func colour(t float64) uint8 { return uint8(1 + math.Round(t*254)) }

// finite reports whether v is neither NaN nor ±Inf.
func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// scale returns the function mapping a value in [lo, hi] to [0, 1]; a
// constant maps to ½.
func scale(lo, hi float64) func(float64) float64 {
	if !(hi > lo) {
		return func(float64) float64 { return 0.5 }
	}
	return func(v float64) float64 { return math.Min(math.Max((v-lo)/(hi-lo), 0), 1) }
}

// render reads the elements the plan draws and draws them.
func (p *plan) render(ctx context.Context) (*paletteImage, error) {
	if p.chart {
		return p.renderChart(ctx)
	}
	return p.renderPlane(ctx)
}

// renderPlane draws the plane: the elements under the pixels' centres
// are read in one orthogonal selection (zarr.Array.ReadOrthogonal: the
// middle index of each leading dimension, the sampled rows and columns),
// which gets each chunk under them once, through the cache, and starts no
// read-ahead: on a remote store a preview costs one request per chunk (a
// shard's index and inner chunks), not one per row drawn.
func (p *plan) renderPlane(ctx context.Context) (*paletteImage, error) {
	shape := p.a.Shape()
	rank := len(shape)
	indices := make([][]int64, rank)
	for i := range rank - 2 {
		indices[i] = []int64{shape[i] / 2}
	}
	indices[rank-2], indices[rank-1] = p.rows(), sample(p.W, p.w)
	buf := make([]byte, int64(p.h)*int64(p.w)*p.item)
	if err := p.a.ReadOrthogonal(ctx, indices, buf); err != nil {
		return nil, err
	}
	vals := make([]float64, p.h*p.w)
	for k := range vals {
		vals[k] = p.decode(buf[int64(k)*p.item:])
	}
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, v := range vals {
		if finite(v) {
			lo, hi = math.Min(lo, v), math.Max(hi, v)
		}
	}
	t := scale(lo, hi)
	img := &paletteImage{w: p.w, h: p.h, pix: make([]uint8, len(vals)), palette: planePalette, transparent: true}
	for k, v := range vals {
		if finite(v) {
			img.pix[k] = colour(t(v))
		}
	}
	return img, nil
}

// renderChart draws a rank-1 array as a line chart: value upwards against
// index rightwards, each pixel column covering its run of elements (the
// elements ⌊c·n/512⌋ up to ⌊(c+1)·n/512⌋, at least one) from their
// minimum to their maximum and joined to the next column's, three pixels
// wide, coloured by height. Non-finite elements are left out.
func (p *plan) renderChart(ctx context.Context) (*paletteImage, error) {
	lo, hi := make([]float64, chartW), make([]float64, chartW)
	for c := range lo {
		lo[c], hi[c] = math.Inf(1), math.Inf(-1)
	}
	add := func(c int, v float64) {
		if finite(v) {
			lo[c], hi[c] = math.Min(lo[c], v), math.Max(hi[c], v)
		}
	}
	start := func(c int) int64 { return mulDiv(int64(c), p.n, chartW, 0) }
	if p.n < chartW {
		// Fewer elements than columns: each column shows the element
		// its run starts at.
		buf := make([]byte, p.n*p.item)
		if err := p.a.ReadRegion(ctx, []int64{0}, []int64{p.n}, buf); err != nil {
			return nil, err
		}
		for c := range chartW {
			add(c, p.decode(buf[start(c)*p.item:]))
		}
	} else {
		// The runs partition the elements: read them in pieces, each
		// element to its column.
		err := readPieces(ctx, p.a, 0, p.n*p.item, func(off int64, b []byte) {
			e := off / p.item
			c := sort.Search(chartW, func(c int) bool { return start(c+1) > e })
			for k := int64(0); k < int64(len(b)); k, e = k+p.item, e+1 {
				for start(c+1) <= e {
					c++
				}
				add(c, p.decode(b[k:]))
			}
		})
		if err != nil {
			return nil, err
		}
	}
	vmin, vmax := math.Inf(1), math.Inf(-1)
	for c := range chartW {
		vmin, vmax = math.Min(vmin, lo[c]), math.Max(vmax, hi[c])
	}
	t := scale(vmin, vmax)
	y := func(v float64) int { return int(math.Round((1 - t(v)) * (chartH - 1))) }
	img := &paletteImage{w: chartW, h: chartH, pix: make([]uint8, chartW*chartH), palette: chartPalette}
	for c := range chartW {
		if lo[c] > hi[c] {
			continue // no finite element
		}
		top, bottom := y(hi[c]), y(lo[c])
		if c > 0 && lo[c-1] <= hi[c-1] {
			// Joined to the column before, so that the line is unbroken.
			top, bottom = min(top, y(lo[c-1])), max(bottom, y(hi[c-1]))
		}
		// A pixel thicker on either side, to stay visible in thumbnails.
		for r := max(top-1, 0); r <= min(bottom+1, chartH-1); r++ {
			img.pix[r*chartW+c] = colour(1 - float64(r)/(chartH-1))
		}
	}
	return img, nil
}

// readPiece is about the most a chart reads of an array at once.
const readPiece = 32 << 10

// readPieces reads the bytes [off, off+n) of a rank-1 array a's contents
// in pieces of whole decode units (chunks, or a shard's inner chunks) of
// about readPiece bytes, first to last, handing each to fn. Each is one
// region (zarr.Array.ReadRegion), so each unit is got once and no
// read-ahead starts: a remote chart costs a request per chunk.
func readPieces(ctx context.Context, a *zarr.Array, off, n int64, fn func(off int64, b []byte)) error {
	item := int64(a.DataType().Size)
	unit := decodeUnit(a)[0]
	piece := max(readPiece/(unit*item), 1) * unit // elements
	e0, e1 := off/item, (off+n)/item
	buf := make([]byte, min(piece, e1-e0)*item)
	for e := e0; e < e1; {
		// End at a unit boundary, so that no unit is split between two reads.
		end := min((e/unit+1)*unit+piece-unit, e1)
		b := buf[:(end-e)*item]
		if err := a.ReadRegion(ctx, []int64{e}, []int64{end - e}, b); err != nil {
			return err
		}
		fn(e*item, b)
		e = end
	}
	return nil
}
