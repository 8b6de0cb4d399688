package view

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"path"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/internal/pyjson"
	"github.com/zarrfs/zarrfs/zarr"
)

// This file makes data.hdr, the ENVI header that lets GDAL (and through it
// QGIS), ENVI and SNAP open an array's `data` as a raster: band sequential,
// little-endian, no offset. Rank 1 is one line; rank 2 is lines × samples;
// rank ≥ 3 flattens the leading dimensions into bands.
//
// Georeferencing: where the last two dimensions have 1-D coordinate arrays
// in the same group (arrays named as the dimensions) that are CF latitude
// and longitude and evenly spaced, the header gets a geographic `map info`.
// CF coordinates are the centres of the cells, so the reference pixel is
// (1.5, 1.5), the centre of the first pixel in ENVI's 1-based pixel
// coordinates whose (1, 1) is the upper-left corner of the first pixel;
// its map coordinates are the first longitude and latitude, so no
// arithmetic rounds them. The pixel sizes are the coordinate steps, signed:
// ENVI's y size is positive when latitude decreases down the rows, and a
// grid stored south to north (latitude increasing) has a negative y size,
// which GDAL reads as a south-up geotransform.
//
// Projected rasters: where the last two dimensions have evenly spaced
// projected x and y coordinates (CF standard_name, axis, or the names x
// and y) and the array names its CRS (a CF grid_mapping variable's
// crs_wkt or spatial_ref, as rioxarray and GDAL write it, or proj:wkt2 /
// proj:epsg), the header gets a map info and the WKT as its coordinate
// system string, from which GDAL's ENVI driver takes the CRS.

// hasElements reports whether an array has at least one element (raster
// and volume headers need at least one).
func hasElements(a *zarr.Array) bool {
	for _, n := range a.Shape() {
		if n == 0 {
			return false
		}
	}
	return true
}

// enviFile is an array's data.hdr. The coordinates it may read (band
// names, map info) make it render on first use, once.
type enviFile struct {
	h    *zarr.Hierarchy
	node *zarr.Node
	elem elemType
	rendered
}

// newEnviFile returns the data.hdr of node n, elements of type t.
func newEnviFile(h *zarr.Hierarchy, n *zarr.Node, t elemType) *enviFile {
	f := &enviFile{h: h, node: n, elem: t}
	f.build = f.header
	return f
}

func (f *enviFile) Name() string { return "data.hdr" }

// npyEnviFile is data.npy.hdr: data.hdr with the header offset of
// data.npy's NumPy header. GDAL's ENVI driver (and so QGIS) looks for the
// header of FILE as FILE.hdr first and then with FILE's extension
// replaced: without this file it would pair data.npy with data.hdr and
// read the NumPy header as pixels, with no error (issue 44). With it,
// data.npy opens as the same raster as data.
type npyEnviFile struct {
	rendered
}

// newNpyEnviFile returns the data.npy.hdr of the array whose data.hdr is
// hdr and whose data.npy has a NumPy header of offset bytes.
func newNpyEnviFile(hdr *enviFile, offset int) *npyEnviFile {
	f := &npyEnviFile{}
	f.build = func(ctx context.Context) ([]byte, error) {
		b, err := hdr.render(ctx)
		if err != nil {
			return nil, err
		}
		return bytes.Replace(b, []byte("\nheader offset = 0\n"), []byte("\nheader offset = "+strconv.Itoa(offset)+"\n"), 1), nil
	}
	return f
}

func (f *npyEnviFile) Name() string { return "data.npy.hdr" }

// header makes the header. A coordinate that cannot be read counts as
// none, unless the caller gave up (ctx is done): then nothing is kept, so
// that no header loses its map info to an interrupted stat.
func (f *enviFile) header(ctx context.Context) ([]byte, error) {
	coords := f.coordinates(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	crs := f.crs(ctx)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return enviHeader(f.node, f.elem, coords, crs), nil
}

// projection is the coordinate reference system of a projected raster, as
// its attributes name it: a WKT, or an EPSG code.
type projection struct {
	wkt  string
	epsg int64
	// transform is the spatial: convention's affine transform
	// (spatial:transform, rasterio's order a, b, c, d, e, f: x = a·col +
	// b·row + c, y = d·col + e·row + f), nil when there is none; centre
	// says it maps pixel centres (spatial:registration "node"), not corners.
	transform []float64
	centre    bool
	dims      []string // spatial:dimensions, [y, x]
}

// crs returns the array's projection, or nil: the WKT (crs_wkt, or GDAL's
// and rioxarray's spatial_ref) of the CF grid-mapping variable its
// grid_mapping attribute names in its group, else a proj:wkt2 or
// proj:epsg attribute (the STAC projection extension, as GeoZarr writes
// it) of the array or of its group.
func (f *enviFile) crs(ctx context.Context) *projection {
	attrs := f.node.OrderedAttributes()
	if gm := attrString(attrs, "grid_mapping"); strings.TrimSpace(gm) != "" && f.h != nil {
		// "NAME" or CF's extended "NAME: COORDS …" form: the first name.
		name, _, _ := strings.Cut(strings.Fields(gm)[0], ":")
		p := strings.TrimPrefix(path.Join(path.Dir("/"+f.node.Path), name), "/")
		if c, err := f.h.Node(ctx, p); err == nil && c.Err == nil {
			ca := c.OrderedAttributes()
			for _, k := range []string{"crs_wkt", "spatial_ref"} {
				if w := attrString(ca, k); w != "" {
					return &projection{wkt: w}
				}
			}
		}
	}
	sources := [][]pyjson.Field{attrs}
	if f.h != nil && f.node.Path != "" {
		if g, err := f.h.Node(ctx, strings.TrimPrefix(path.Dir("/"+f.node.Path), "/")); err == nil && g.Err == nil {
			sources = append(sources, g.OrderedAttributes())
		}
	}
	var p *projection
	for _, a := range sources {
		if w := attrString(a, "proj:wkt2"); w != "" {
			p = &projection{wkt: w}
			break
		}
		if code, ok := strings.CutPrefix(attrString(a, "proj:code"), "EPSG:"); ok {
			if i, err := strconv.ParseInt(code, 10, 64); err == nil {
				p = &projection{epsg: i}
				break
			}
		}
		for _, m := range a {
			if i, ok := m.Value.Int(); m.Name == "proj:epsg" && m.Value.Kind == pyjson.Num && ok {
				p = &projection{epsg: i}
			}
		}
		if p != nil {
			break
		}
	}
	if p != nil {
		p.spatial(sources)
	}
	return p
}

// spatial reads the spatial: convention (github.com/zarr-conventions/
// spatial) of the array or, failing that, its group: an affine transform
// of six finite numbers and the names of the spatial dimensions.
func (p *projection) spatial(sources [][]pyjson.Field) {
	for _, a := range sources {
		for _, m := range a {
			switch {
			case m.Name == "spatial:transform" && m.Value.Kind == pyjson.Array && len(m.Value.Items) == 6 && p.transform == nil:
				t := make([]float64, 6)
				for i, it := range m.Value.Items {
					if it.Kind != pyjson.Num || !finite(it.Float()) {
						return
					}
					t[i] = it.Float()
				}
				p.transform = t
				p.centre = attrString(a, "spatial:registration") == "node"
				p.dims = nil
				for _, d := range a {
					if d.Name == "spatial:dimensions" && d.Value.Kind == pyjson.Array && len(d.Value.Items) == 2 &&
						d.Value.Items[0].Kind == pyjson.Str && d.Value.Items[1].Kind == pyjson.Str {
						p.dims = []string{d.Value.Items[0].Str, d.Value.Items[1].Str}
					}
				}
			}
		}
		if p.transform != nil {
			return
		}
	}
}

// northUpTransform returns the spatial: transform of a raster whose last
// two dimensions are named y and x, when it has no rotation or shear
// (ENVI's map info has none) and its spatial:dimensions, if any, are
// those two; else nil.
func (p *projection) northUpTransform(y, x string) []float64 {
	if p == nil || p.transform == nil || p.transform[1] != 0 || p.transform[3] != 0 ||
		p.transform[0] == 0 || p.transform[4] == 0 {
		return nil
	}
	if p.dims != nil && (p.dims[0] != y || p.dims[1] != x) {
		return nil
	}
	return p.transform
}

// attrString returns a string attribute, or "".
func attrString(attrs []pyjson.Field, name string) string {
	for _, m := range attrs {
		if m.Name == name && m.Value.Kind == pyjson.Str {
			return m.Value.Str
		}
	}
	return ""
}

// projectedAxis reports whether the coordinate named name is a projected
// x (or y) coordinate: by standard_name, axis, or, having neither, its
// name "x" (or "y").
func (c *coordinate) projectedAxis(name string, y bool) bool {
	if c == nil || len(c.values) == 0 {
		return false
	}
	std, axis := c.attr("standard_name"), strings.ToUpper(c.attr("axis"))
	if y {
		return std == "projection_y_coordinate" || axis == "Y" || std == "" && axis == "" && name == "y"
	}
	return std == "projection_x_coordinate" || axis == "X" || std == "" && axis == "" && name == "x"
}

// projectedMapInfo returns the map info and coordinate system string of a
// projected raster whose first pixel centre is (x0, y0), with steps dx and
// dy (y's sign as ENVI has it: positive when y falls down the rows), or
// "" when the projection cannot be written: a WKT goes into the coordinate
// system string, which GDAL's ENVI driver reads as the raster's CRS (the
// map info's projection is then "Arbitrary"); an EPSG code alone is
// written only for WGS 84 (4326) and WGS 84 / UTM (32601–32660 north,
// 32701–32760 south), which ENVI's map info names itself.
func projectedMapInfo(p *projection, x0, y0, dx, dy float64) string {
	at := fmt.Sprintf("1.5, 1.5, %s, %s, %s, %s", fmtFloat(x0), fmtFloat(y0), fmtFloat(dx), fmtFloat(dy))
	switch {
	case p.wkt != "":
		wkt := strings.Join(strings.Fields(p.wkt), " ")
		if strings.ContainsAny(wkt, "{}") {
			return ""
		}
		return "map info = {Arbitrary, " + at + ", units=Meters}\ncoordinate system string = {" + wkt + "}\n"
	case p.epsg == 4326:
		return "map info = {Geographic Lat/Lon, " + at + ", WGS-84, units=Degrees}\n"
	case p.epsg > 32600 && p.epsg <= 32660:
		return fmt.Sprintf("map info = {UTM, %s, %d, North, WGS-84, units=Meters}\n", at, p.epsg-32600)
	case p.epsg > 32700 && p.epsg <= 32760:
		return fmt.Sprintf("map info = {UTM, %s, %d, South, WGS-84, units=Meters}\n", at, p.epsg-32700)
	}
	return ""
}

// coordinates returns the values of the arrays named as each dimension of
// the array, in its group, that are 1-D and as long as the dimension (nil
// where there is none, or it cannot be read): the leading one when there
// is a single leading dimension, and the last two.
func (f *enviFile) coordinates(ctx context.Context) []*coordinate {
	a := f.node.Array
	rank := len(a.Shape())
	coords := make([]*coordinate, rank)
	if f.h == nil {
		return coords
	}
	for i, name := range a.DimensionNames() {
		if name == "" || !(rank == 3 && i == 0 || rank >= 2 && i >= rank-2) {
			continue
		}
		coords[i] = readCoordinate(ctx, f.h, path.Join(path.Dir("/"+f.node.Path), name), a.Shape()[i])
	}
	return coords
}

// maxBandNames bounds the bands data.hdr names.
const maxBandNames = 1 << 16

// maxCoordinate bounds the length of the coordinate arrays a header reads.
const maxCoordinate = 1 << 20

// coordinate is a 1-D coordinate array's values and attributes.
type coordinate struct {
	values []float64
	text   []string // the values as spelled in band names
	attrs  []pyjson.Field
	// timeUnits are the CF units of a datetime coordinate's values.
	timeUnits string
}

// readCoordinate reads the 1-D array at p of length n; nil when there is
// none of a numeric type, or it cannot be read.
func readCoordinate(ctx context.Context, h *zarr.Hierarchy, p string, n int64) *coordinate {
	if n > maxCoordinate {
		return nil
	}
	c, err := h.Node(ctx, strings.TrimPrefix(p, "/"))
	if err != nil || c.Kind != zarr.KindArray || c.Array == nil || c.Array.Err != nil ||
		len(c.Array.Shape()) != 1 || c.Array.Shape()[0] != n {
		return nil
	}
	t, ok := elemOf(c.Array.DataType())
	datetime := t.kind == 'M' && t.size == 8 && cfTimeUnits[t.unit] != ""
	if !ok || !(t.numeric() || t.kind == 'S' || datetime) {
		return nil
	}
	buf := make([]byte, c.Array.Size())
	if k, _ := c.Array.ReadAt(ctx, buf, 0); k != len(buf) {
		return nil
	}
	co := &coordinate{attrs: c.OrderedAttributes()}
	for i := 0; i < len(buf); i += t.size {
		if t.kind == 'S' {
			co.text = append(co.text, string(bytes.TrimRight(buf[i:i+t.size], "\x00")))
			continue
		}
		if datetime {
			v := int64(binary.LittleEndian.Uint64(buf[i:]))
			co.values = append(co.values, float64(v))
			co.text = append(co.text, strconv.FormatInt(v, 10))
			continue
		}
		v, s := t.value(buf[i : i+t.size])
		co.values = append(co.values, v)
		co.text = append(co.text, s)
	}
	if datetime {
		co.timeUnits = cfTimeUnits[t.unit] + " since 1970-01-01"
	}
	return co
}

// labels returns how band names show the coordinate's values: decoded
// times for a CF time coordinate (by its units and calendar, or its
// datetime type), else the values as spelled.
func (c *coordinate) labels() []string {
	units := c.timeUnits
	if units == "" {
		units = c.attr("units")
	}
	if len(c.values) == len(c.text) && strings.Contains(units, " since ") {
		if text, ok := cfTimes(c.values, units, c.attr("calendar")); ok {
			return text
		}
	}
	return c.text
}

// attr returns a string attribute of the coordinate, or "".
func (c *coordinate) attr(name string) string {
	for _, m := range c.attrs {
		if m.Name == name && m.Value.Kind == pyjson.Str {
			return m.Value.Str
		}
	}
	return ""
}

// CF's spellings of the units of latitude and longitude.
var (
	latUnits = map[string]bool{"degrees_north": true, "degree_north": true, "degree_N": true, "degrees_N": true, "degreeN": true, "degreesN": true}
	lonUnits = map[string]bool{"degrees_east": true, "degree_east": true, "degree_E": true, "degrees_E": true, "degreeE": true, "degreesE": true}
)

// is reports whether the coordinate named name is CF's latitude (lat) or
// longitude: by its standard_name, its units, or, having neither, its name.
func (c *coordinate) is(name string, lat bool) bool {
	if c == nil || len(c.values) == 0 {
		return false
	}
	std, units := c.attr("standard_name"), c.attr("units")
	if lat {
		return std == "latitude" || latUnits[units] || std == "" && units == "" && (name == "lat" || name == "latitude")
	}
	return std == "longitude" || lonUnits[units] || std == "" && units == "" && (name == "lon" || name == "longitude")
}

// step returns the coordinate's even spacing: ok is false when it has
// fewer than two values or its steps differ by more than a thousandth of a
// step anywhere.
func (c *coordinate) step() (float64, bool) {
	n := len(c.values)
	if n < 2 {
		return 0, false
	}
	d := (c.values[n-1] - c.values[0]) / float64(n-1)
	if d == 0 || math.IsNaN(d) || math.IsInf(d, 0) {
		return 0, false
	}
	for i, v := range c.values {
		if math.Abs(v-c.values[0]-float64(i)*d) > 1e-3*math.Abs(d) {
			return 0, false
		}
	}
	return d, true
}

// enviHeader returns the ENVI header of node n's data, elements of type
// t; coords are the coordinate arrays of its dimensions (nil where none).
func enviHeader(n *zarr.Node, t elemType, coords []*coordinate, crs *projection) []byte {
	a := n.Array
	code := t.codes().envi
	shape := a.Shape()
	samples, lines, bands := int64(1), int64(1), int64(1)
	rank := len(shape)
	switch {
	case rank == 1:
		samples = shape[0]
	case rank >= 2:
		samples, lines = shape[rank-1], shape[rank-2]
		for _, d := range shape[:rank-2] {
			bands *= d
		}
	}
	var b strings.Builder
	b.Grow(256)
	b.WriteString("ENVI\ndescription = {zarrfs: /" + enviText(n.Path) + "}\nsamples = ")
	b.WriteString(strconv.FormatInt(samples, 10) + "\nlines = " + strconv.FormatInt(lines, 10) +
		"\nbands = " + strconv.FormatInt(bands, 10) + "\n")
	b.WriteString("header offset = 0\nfile type = ENVI Standard\ndata type = " + strconv.Itoa(code) +
		"\ninterleave = bsq\nbyte order = 0\n")
	if s, ok := enviIgnoreValue(a.Fill(), t); ok {
		fmt.Fprintf(&b, "data ignore value = %s\n", s)
	}
	dimName := func(i int) string {
		if i < len(a.DimensionNames()) {
			return a.DimensionNames()[i]
		}
		return ""
	}
	// Band names carry the array's path (QGIS names every layer of these
	// files "data"); a stack's bands along a single leading coordinate
	// its values, times decoded. A stack opens as its first band (ENVI's
	// default bands; GDAL makes it gray), not an RGB mix of three.
	name := enviText("/" + n.Path)
	switch {
	case bands == 1:
		fmt.Fprintf(&b, "band names = {%s}\n", name)
	case bands <= maxBandNames:
		names := make([]string, bands)
		var labels []string
		if rank == 3 && coords[0] != nil {
			labels = coords[0].labels()
		}
		for i := range names {
			if len(labels) == len(names) {
				names[i] = name + " " + enviText(dimName(0)+" "+labels[i])
			} else {
				names[i] = name + " band " + strconv.Itoa(i+1)
			}
		}
		fmt.Fprintf(&b, "band names = {%s}\n", strings.Join(names, ", "))
	}
	if bands > 1 {
		b.WriteString("default bands = {1}\n")
	}
	if rank >= 2 {
		y, x := coords[rank-2], coords[rank-1]
		if y.is(dimName(rank-2), true) && x.is(dimName(rank-1), false) {
			dy, okY := y.step()
			dx, okX := x.step()
			if okX && okY {
				fmt.Fprintf(&b, "map info = {Geographic Lat/Lon, 1.5, 1.5, %s, %s, %s, %s, WGS-84, units=Degrees}\n",
					fmtFloat(x.values[0]), fmtFloat(y.values[0]), fmtFloat(dx), fmtFloat(-dy))
			}
		} else if crs != nil && y.projectedAxis(dimName(rank-2), true) && x.projectedAxis(dimName(rank-1), false) {
			dy, okY := y.step()
			dx, okX := x.step()
			if okX && okY {
				b.WriteString(projectedMapInfo(crs, x.values[0], y.values[0], dx, -dy))
			}
		} else if t := crs.northUpTransform(dimName(rank-2), dimName(rank-1)); t != nil {
			// The spatial: convention: the transform places the first
			// pixel's corner (ENVI's reference pixel 1, 1), or its centre.
			mi := projectedMapInfo(crs, t[2], t[5], t[0], -t[4])
			if !crs.centre {
				mi = strings.Replace(mi, "1.5, 1.5, ", "1, 1, ", 1)
			}
			b.WriteString(mi)
		}
	}
	return []byte(b.String())
}

// enviIgnoreValue returns the `data ignore value` of an array whose fill
// element is fill (nil: none), elements of type t: the fill value itself,
// in every Zarr format, because that is what GDAL's own Zarr driver
// reports as the array's NoData (frmts/zarr: LoadArray registers the
// parsed fill_value, v2 and v3 alike, and reads no _FillValue or
// missing_value attribute; a bool's false is 0), so QGIS shows the same
// picture through data.hdr as from the store. NaN and the infinities are
// spelled as GDAL's ENVI driver parses them (CPLAtof).
func enviIgnoreValue(fill []byte, t elemType) (string, bool) {
	if fill == nil || len(fill) != t.size || !t.numeric() {
		return "", false
	}
	v, s := t.value(fill)
	switch {
	case math.IsNaN(v):
		s = "nan"
	case math.IsInf(v, 1):
		s = "inf"
	case math.IsInf(v, -1):
		s = "-inf"
	}
	return s, true
}

func fmtFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// enviText makes s fit inside an ENVI header's braced, comma-separated
// list: braces, commas and line breaks become spaces.
func enviText(s string) string {
	return strings.Map(func(r rune) rune {
		switch r {
		case '{', '}', ',', '\n', '\r':
			return ' '
		}
		return r
	}, s)
}
