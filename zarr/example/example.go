// Package example writes zarrfs's built-in example hierarchy: a small,
// real-looking Zarr v3 hierarchy with a v2 part, used by `zarrfs example`
// and `zarrfs demo` and by tests. Its content is deterministic.
//
// The v3 hierarchy holds a float32 temperature cube with CF-style
// attributes and its coordinate arrays, an int16 image, a 0-d scalar, a
// partly written array whose missing chunks read as the fill value,
// variable-length strings, and in codecs/ the same small array stored with
// each v3 codec chain zarrfs can write.
//
// The folder v2/ holds a Zarr v2 hierarchy as xarray writes it: arrays
// with _ARRAY_DIMENSIONS, Fortran order, big-endian data, "/" chunk keys,
// and in v2/codecs/ one array per numcodecs compressor, checksum and
// lossless filter. A Zarr hierarchy has one format, so v2/ is a hierarchy
// of its own: open or mount DIR/v2 to see it.
//
// Codecs are chosen with codec.Registered, so the example grows as codecs
// are added; only codecs that another implementation here (zarr-python 2,
// zarrita) can read are used, so that tests can check every array.
package example

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"strings"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/zarr"
)

// Shape of the temperature cube: hourly for a day on a 2° global grid.
const (
	NumTimes = 24
	NumLats  = 90
	NumLons  = 180
)

// Open writes the example hierarchy into a new memory store and opens it.
func Open(ctx context.Context) (*zarr.Hierarchy, error) {
	st := memory.New()
	if err := Write(ctx, st); err != nil {
		return nil, err
	}
	return zarr.Open(ctx, st, zarr.Options{})
}

// Write writes the example hierarchy into st, whose root must be empty.
func Write(ctx context.Context, st zarr.WritableStore) error {
	w := &writer{ctx: ctx, st: st}
	w.group("", zarr.GroupMeta{Format: zarr.FormatV3, Attributes: map[string]any{
		"title":       "zarrfs example hierarchy",
		"description": "Synthetic weather data and one small array per codec, written by `zarrfs example`.",
		"Conventions": "CF-1.10",
		"institution": "zarrfs",
		"history":     "created by zarrfs example (deterministic content)",
	}})
	w.weather()
	w.image()
	w.scalar()
	w.sparse()
	w.strings()
	w.codecs()
	w.v2()
	return w.err
}

// writer remembers the first error, so that Write reads as a list.
type writer struct {
	ctx context.Context
	st  zarr.WritableStore
	err error
}

func (w *writer) group(path string, g zarr.GroupMeta) {
	if w.err != nil {
		return
	}
	if err := zarr.CreateGroup(w.ctx, w.st, path, g); err != nil {
		w.err = fmt.Errorf("example: group %q: %w", path, err)
	}
}

// array creates the array at path and writes data (C order, little-endian)
// into the region at start with the given shape (nil: the whole array).
func (w *writer) array(path string, m zarr.ArrayMeta, regions ...region) {
	if w.err != nil {
		return
	}
	a, err := zarr.CreateArray(w.ctx, w.st, path, m)
	if err != nil {
		w.err = fmt.Errorf("example: array %q: %w", path, err)
		return
	}
	for _, r := range regions {
		shape := r.shape
		if shape == nil {
			shape = m.Shape
		}
		start := r.start
		if start == nil {
			start = make([]int64, len(m.Shape))
		}
		if err := a.WriteRegion(w.ctx, start, shape, r.data); err != nil {
			w.err = fmt.Errorf("example: array %q: write %v+%v: %w", path, start, shape, err)
			return
		}
	}
}

// region is data for a box of an array; nil start and shape mean the whole
// array.
type region struct {
	start, shape []int64
	data         []byte
}

// whole is a region covering the whole array.
func whole(data []byte) region { return region{data: data} }

// compressor returns the v3 codec chain ending in the best compressor
// available.
func compressor() []zarr.CodecSpec {
	codecs := []zarr.CodecSpec{{Name: "bytes", Configuration: map[string]any{"endian": "little"}}}
	switch {
	case codec.Registered("zstd"):
		return append(codecs, zarr.CodecSpec{Name: "zstd", Configuration: map[string]any{"level": 3, "checksum": false}})
	case codec.Registered("gzip"):
		return append(codecs, zarr.CodecSpec{Name: "gzip", Configuration: map[string]any{"level": 5}})
	}
	return codecs
}

// Temperature returns the air temperature (K) of the cube at hour t,
// latitude index i and longitude index j: a zonal gradient, a daily cycle
// that follows the sun, and some weather.
func Temperature(t, i, j int) float32 {
	lat := -89.0 + 2*float64(i)
	lon := -179.0 + 2*float64(j)
	phi := lat * math.Pi / 180
	local := float64(t) + lon/15 // local solar time in hours
	daily := 6 * math.Cos(phi) * math.Cos(2*math.Pi*(local-14)/24)
	weather := 3 * math.Sin(3*phi+float64(t)/5) * math.Cos(2*lon*math.Pi/180-float64(t)/7)
	return float32(250 + 50*math.Cos(phi)*math.Cos(phi) + daily + weather)
}

func (w *writer) weather() {
	data := make([]byte, 0, NumTimes*NumLats*NumLons*4)
	for t := range NumTimes {
		for i := range NumLats {
			for j := range NumLons {
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(Temperature(t, i, j)))
			}
		}
	}
	w.array("temperature", zarr.ArrayMeta{
		Format: zarr.FormatV3, Shape: []int64{NumTimes, NumLats, NumLons}, ChunkShape: []int64{6, 45, 90},
		DataType: "float32", FillValue: "NaN", Codecs: compressor(),
		DimensionNames: []string{"time", "lat", "lon"},
		Attributes: map[string]any{
			"units":         "K",
			"long_name":     "air temperature at 2 m",
			"standard_name": "air_temperature",
			"coordinates":   "time lat lon",
		},
	}, whole(data))

	var lat, lon, hours []byte
	for i := range NumLats {
		lat = binary.LittleEndian.AppendUint64(lat, math.Float64bits(-89+2*float64(i)))
	}
	for j := range NumLons {
		lon = binary.LittleEndian.AppendUint64(lon, math.Float64bits(-179+2*float64(j)))
	}
	for t := range NumTimes {
		hours = binary.LittleEndian.AppendUint32(hours, uint32(t))
	}
	coord := func(name, dtype string, n int64, data []byte, attrs map[string]any) {
		w.array(name, zarr.ArrayMeta{
			Format: zarr.FormatV3, Shape: []int64{n}, ChunkShape: []int64{n},
			DataType: dtype, FillValue: 0, Codecs: compressor(),
			DimensionNames: []string{name}, Attributes: attrs,
		}, whole(data))
	}
	coord("lat", "float64", NumLats, lat, map[string]any{"units": "degrees_north", "long_name": "latitude", "standard_name": "latitude"})
	coord("lon", "float64", NumLons, lon, map[string]any{"units": "degrees_east", "long_name": "longitude", "standard_name": "longitude"})
	coord("time", "int32", NumTimes, hours, map[string]any{"units": "hours since 2026-01-01 00:00:00", "calendar": "proleptic_gregorian", "long_name": "time"})
}

// Pixel returns the value of the image at row y, column x: rings around
// the centre on a diagonal ramp.
func Pixel(y, x int) int16 {
	dy, dx := float64(y-128), float64(x-128)
	r := math.Sqrt(dy*dy + dx*dx)
	return int16(100*(y+x) - 12800 + int(8000*math.Cos(r/6)))
}

func (w *writer) image() {
	var data []byte
	for y := range 256 {
		for x := range 256 {
			data = binary.LittleEndian.AppendUint16(data, uint16(Pixel(y, x)))
		}
	}
	w.array("image", zarr.ArrayMeta{
		Format: zarr.FormatV3, Shape: []int64{256, 256}, ChunkShape: []int64{64, 64},
		DataType: "int16", FillValue: 0, Codecs: compressor(),
		DimensionNames: []string{"y", "x"},
		Attributes:     map[string]any{"long_name": "test pattern", "units": "1"},
	}, whole(data))
}

func (w *writer) scalar() {
	w.array("gravity", zarr.ArrayMeta{
		Format: zarr.FormatV3, Shape: []int64{}, ChunkShape: []int64{},
		DataType: "float64", FillValue: 0,
		Attributes: map[string]any{"long_name": "standard acceleration of gravity", "units": "m s-2"},
	}, whole(binary.LittleEndian.AppendUint64(nil, math.Float64bits(9.80665))))
}

// Sparse chunk grid: 10×10 chunks of 10×10; only the chunks on the
// diagonal are written, so the others read as the fill value.
const (
	SparseFill  = 255
	sparseChunk = 10
)

func (w *writer) sparse() {
	var regions []region
	for c := int64(0); c < 10; c++ {
		data := make([]byte, sparseChunk*sparseChunk)
		for k := range data {
			data[k] = byte(c)
		}
		regions = append(regions, region{
			start: []int64{c * sparseChunk, c * sparseChunk},
			shape: []int64{sparseChunk, sparseChunk},
			data:  data,
		})
	}
	w.array("sparse", zarr.ArrayMeta{
		Format: zarr.FormatV3, Shape: []int64{100, 100}, ChunkShape: []int64{sparseChunk, sparseChunk},
		DataType: "uint8", FillValue: SparseFill, Codecs: compressor(),
		Attributes: map[string]any{"description": "only the 10 chunks on the diagonal are stored; the other 90 read as the fill value 255"},
	}, regions...)
}

// Stations are the elements of the variable-length string array.
var Stations = []string{"Reykjavík", "Zürich", "東京", "São Paulo", "McMurdo\nStation", `C:\weather`}

// stationsChunk is the chunk length of the stations array.
const stationsChunk = 4

// strings writes the variable-length string array "stations". The engine
// writes only fixed-size elements, so its chunks are encoded here with the
// vlen-utf8 codec and stored under their default v3 chunk keys.
func (w *writer) strings() {
	if !codec.Registered("vlen-utf8") || w.err != nil {
		return
	}
	const path = "stations"
	if _, err := zarr.CreateArray(w.ctx, w.st, path, zarr.ArrayMeta{
		Format: zarr.FormatV3, Shape: []int64{int64(len(Stations))}, ChunkShape: []int64{stationsChunk},
		DataType: "string", FillValue: "",
		Codecs:     []zarr.CodecSpec{{Name: "vlen-utf8"}},
		Attributes: map[string]any{"long_name": "weather station names"},
	}); err != nil {
		w.err = fmt.Errorf("example: array %q: %w", path, err)
		return
	}
	c, err := codec.New("vlen-utf8", nil)
	if err != nil {
		w.err = fmt.Errorf("example: array %q: %w", path, err)
		return
	}
	enc, ok := c.(codec.ArrayToBytes)
	if !ok {
		w.err = fmt.Errorf("example: array %q: vlen-utf8 is not an array→bytes codec", path)
		return
	}
	for i := 0; i < len(Stations); i += stationsChunk {
		// A chunk always holds stationsChunk elements; past the end of the
		// array they are the fill value "".
		chunk := binary.LittleEndian.AppendUint32(nil, stationsChunk)
		for k := i; k < i+stationsChunk; k++ {
			s := ""
			if k < len(Stations) {
				s = Stations[k]
			}
			chunk = binary.LittleEndian.AppendUint32(chunk, uint32(len(s)))
			chunk = append(chunk, s...)
		}
		spec := codec.ArraySpec{Shape: []int{stationsChunk}, DataType: codec.DataType{Name: "string"}}
		data, err := enc.Encode(chunk, spec)
		if err == nil {
			err = w.st.Set(w.ctx, fmt.Sprintf("%s/c/%d", path, i/stationsChunk), data)
		}
		if err != nil {
			w.err = fmt.Errorf("example: array %q: chunk %d: %w", path, i/stationsChunk, err)
			return
		}
	}
}

// V2Root is the folder of the example that holds its Zarr v2 hierarchy.
const V2Root = "v2"

// v2 writes the Zarr v2 hierarchy in V2Root, as xarray would:
// _ARRAY_DIMENSIONS, Fortran-order chunks, a big-endian array, and one
// array per numcodecs compressor.
func (w *writer) v2() {
	w.group(V2Root, zarr.GroupMeta{Format: zarr.FormatV2, Attributes: map[string]any{
		"description": "a Zarr v2 hierarchy as xarray writes it",
	}})
	var comp *zarr.CodecSpec
	if codec.Registered("zlib") {
		comp = &zarr.CodecSpec{Name: "zlib", Configuration: map[string]any{"level": 5}}
	}
	var precip []byte
	for m := range 12 {
		for i := range 30 {
			for j := range 60 {
				v := math.Max(0, 4*math.Sin(float64(i)/5+float64(m)/2)*math.Cos(float64(j)/9))
				precip = binary.LittleEndian.AppendUint64(precip, math.Float64bits(v))
			}
		}
	}
	w.array(V2Root+"/precipitation", zarr.ArrayMeta{
		Format: zarr.FormatV2, Shape: []int64{12, 30, 60}, ChunkShape: []int64{4, 10, 20},
		DataType: "<f8", FillValue: "NaN", Order: "F", Compressor: comp,
		Attributes: map[string]any{
			"_ARRAY_DIMENSIONS": []string{"month", "lat", "lon"},
			"units":             "mm day-1",
			"long_name":         "mean precipitation rate",
		},
	}, whole(precip))
	var counts []byte
	for i := range 50 {
		counts = binary.LittleEndian.AppendUint32(counts, uint32(i*i*1000))
	}
	w.array(V2Root+"/counts", zarr.ArrayMeta{
		Format: zarr.FormatV2, Shape: []int64{50}, ChunkShape: []int64{16},
		DataType: ">i4", FillValue: 0, DimensionSeparator: "/", Compressor: comp,
		Attributes: map[string]any{"_ARRAY_DIMENSIONS": []string{"n"}, "long_name": "big-endian counts"},
	}, whole(counts))
	w.v2Codecs()
}

// CodecSample returns the content of every array of the codecs groups: a
// 20×30 int32 ramp.
func CodecSample() []byte {
	var data []byte
	for i := range 20 {
		for j := range 30 {
			data = binary.LittleEndian.AppendUint32(data, uint32(int32(1000*i-j*j)))
		}
	}
	return data
}

// v3Chains are the v3 codec chains of the codecs group, each used when all
// its codecs are registered.
var v3Chains = []struct {
	name   string
	codecs []zarr.CodecSpec
}{
	{"bytes_big_endian", []zarr.CodecSpec{{Name: "bytes", Configuration: map[string]any{"endian": "big"}}}},
	{"transpose", []zarr.CodecSpec{
		{Name: "transpose", Configuration: map[string]any{"order": []int{1, 0}}},
		{Name: "bytes", Configuration: map[string]any{"endian": "little"}},
	}},
	{"gzip", []zarr.CodecSpec{bytesLE, {Name: "gzip", Configuration: map[string]any{"level": 6}}}},
	{"zstd", []zarr.CodecSpec{bytesLE, {Name: "zstd", Configuration: map[string]any{"level": 3, "checksum": true}}}},
	{"crc32c", []zarr.CodecSpec{bytesLE, {Name: "crc32c"}}},
	{"blosc", []zarr.CodecSpec{bytesLE, {Name: "blosc", Configuration: map[string]any{
		"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0,
	}}}},
	{"gzip_crc32c", []zarr.CodecSpec{bytesLE, {Name: "gzip", Configuration: map[string]any{"level": 1}}, {Name: "crc32c"}}},
	{"sharding", []zarr.CodecSpec{{Name: "sharding_indexed", Configuration: map[string]any{
		"chunk_shape": []int{5, 5},
		"codecs":      []map[string]any{{"name": "bytes", "configuration": map[string]any{"endian": "little"}}},
		"index_codecs": []map[string]any{
			{"name": "bytes", "configuration": map[string]any{"endian": "little"}},
			{"name": "crc32c"},
		},
	}}}},
}

var bytesLE = zarr.CodecSpec{Name: "bytes", Configuration: map[string]any{"endian": "little"}}

// numcodecsV3 are numcodecs bytes→bytes codecs under their Zarr v3 names
// ("numcodecs.zlib"), as zarr-python 3 writes them. The other numcodecs
// compressors and checksums are in the v2 hierarchy, where zarr-python 2
// can check them; zarrita reads only these under their v3 names.
var numcodecsV3 = []zarr.CodecSpec{
	{Name: "numcodecs.zlib", Configuration: map[string]any{"level": 1}},
	{Name: "numcodecs.lz4", Configuration: map[string]any{"acceleration": 1}},
	{Name: "numcodecs.shuffle", Configuration: map[string]any{"elementsize": 4}},
}

// v2Chain is a Zarr v2 filters-and-compressor chain of the group
// V2Root/codecs.
type v2Chain struct {
	name       string
	filters    []zarr.CodecSpec
	compressor *zarr.CodecSpec
}

// v2Chains are the numcodecs compressors, checksums and lossless filters
// of the group V2Root/codecs. fletcher32 is left out: the numcodecs of
// Debian (0.11) lacks it, so no other implementation here could read it.
var v2Chains = []v2Chain{
	{name: "zlib", compressor: &zarr.CodecSpec{Name: "zlib", Configuration: map[string]any{"level": 1}}},
	{name: "gzip", compressor: &zarr.CodecSpec{Name: "gzip", Configuration: map[string]any{"level": 1}}},
	{name: "zstd", compressor: &zarr.CodecSpec{Name: "zstd", Configuration: map[string]any{"level": 1}}},
	{name: "blosc", compressor: &zarr.CodecSpec{Name: "blosc", Configuration: map[string]any{"cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0}}},
	{name: "lz4", compressor: &zarr.CodecSpec{Name: "lz4", Configuration: map[string]any{"acceleration": 1}}},
	{name: "bz2", compressor: &zarr.CodecSpec{Name: "bz2", Configuration: map[string]any{"level": 1}}},
	{name: "lzma", compressor: &zarr.CodecSpec{Name: "lzma", Configuration: map[string]any{"format": 1, "check": -1, "preset": nil, "filters": nil}}},
	{name: "crc32", compressor: &zarr.CodecSpec{Name: "crc32"}},
	{name: "adler32", compressor: &zarr.CodecSpec{Name: "adler32"}},
	{name: "delta_zlib",
		filters:    []zarr.CodecSpec{{Name: "delta", Configuration: map[string]any{"dtype": "<i4"}}},
		compressor: &zarr.CodecSpec{Name: "zlib", Configuration: map[string]any{"level": 1}}},
	{name: "shuffle_zlib",
		filters:    []zarr.CodecSpec{{Name: "shuffle", Configuration: map[string]any{"elementsize": 4}}},
		compressor: &zarr.CodecSpec{Name: "zlib", Configuration: map[string]any{"level": 1}}},
}

// codecs writes one small array per available v3 codec chain in the group
// "codecs".
func (w *writer) codecs() {
	data := CodecSample()
	w.group("codecs", zarr.GroupMeta{Format: zarr.FormatV3, Attributes: map[string]any{
		"description": "the same 20×30 int32 array stored with each v3 codec zarrfs can write",
	}})
	chains := v3Chains
	for _, c := range numcodecsV3 {
		chains = append(chains, struct {
			name   string
			codecs []zarr.CodecSpec
		}{strings.ReplaceAll(c.Name, ".", "_"), []zarr.CodecSpec{bytesLE, c}})
	}
	for _, c := range chains {
		if !allRegistered(c.codecs) {
			continue
		}
		w.array("codecs/"+c.name, zarr.ArrayMeta{
			Format: zarr.FormatV3, Shape: []int64{20, 30}, ChunkShape: []int64{10, 10},
			DataType: "int32", FillValue: 0, Codecs: c.codecs,
		}, whole(data))
	}
}

// v2Codecs writes one small array per available numcodecs chain in the v2
// group V2Root/codecs.
func (w *writer) v2Codecs() {
	w.group(V2Root+"/codecs", zarr.GroupMeta{Format: zarr.FormatV2, Attributes: map[string]any{
		"description": "the same 20×30 int32 array stored with each numcodecs compressor zarrfs can write",
	}})
	for _, c := range v2Chains {
		all := c.filters
		if c.compressor != nil {
			all = append(all[:len(all):len(all)], *c.compressor)
		}
		if !allRegistered(all) {
			continue
		}
		w.array(V2Root+"/codecs/"+c.name, zarr.ArrayMeta{
			Format: zarr.FormatV2, Shape: []int64{20, 30}, ChunkShape: []int64{10, 10},
			DataType: "<i4", FillValue: 0, Filters: c.filters, Compressor: c.compressor,
		}, whole(CodecSample()))
	}
}

func allRegistered(cs []zarr.CodecSpec) bool {
	for _, c := range cs {
		if !codec.Registered(c.Name) {
			return false
		}
	}
	return true
}
