package view

import (
	"bytes"
	"encoding/binary"
	"math"
	"testing"

	"github.com/zarrfs/zarrfs/internal/pyjson"
	"github.com/zarrfs/zarrfs/zarr"
)

// TestNCFill: which _FillValue dataset.nc gives a variable, per format
// (xarray's use_zarr_fill_value_as_mask: v1/v2 the fill_value, v3 and
// its drafts only an attribute), typed as the variable.
func TestNCFill(t *testing.T) {
	attrs := func(doc string) []pyjson.Field {
		v, err := pyjson.Parse([]byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		return v.Members
	}
	f64 := func(f float64) []byte { return binary.LittleEndian.AppendUint64(nil, math.Float64bits(f)) }
	f32 := func(f float32) []byte { return binary.LittleEndian.AppendUint32(nil, math.Float32bits(f)) }
	i16 := elemType{kind: 'i', size: 2}
	u8 := elemType{kind: 'u', size: 8}
	d := elemType{kind: 'f', size: 8}
	s := elemType{kind: 'f', size: 4}
	for _, c := range []struct {
		name   string
		format zarr.Format
		fill   []byte
		attrs  string
		t      elemType
		want   []byte
	}{
		{"v2 fill_value", zarr.FormatV2, []byte{5, 0}, `{}`, i16, []byte{5, 0}},
		{"v2 fill_value wins over attribute", zarr.FormatV2, []byte{5, 0}, `{"_FillValue": 7}`, i16, []byte{5, 0}},
		{"v2 null fill_value takes the attribute", zarr.FormatV2, nil, `{"_FillValue": 7}`, i16, []byte{7, 0}},
		{"v1 fill_value", zarr.FormatV1, []byte{1, 0}, `{}`, i16, []byte{1, 0}},
		{"v3 fill_value is no mask", zarr.FormatV3, []byte{0, 0}, `{}`, i16, nil},
		{"v3 draft 2022 fill_value is no mask", zarr.FormatV3Draft2022, []byte{0, 0}, `{}`, i16, nil},
		{"v3 draft 2019", zarr.FormatV3Draft2019, []byte{0, 0}, `{"_FillValue": -9}`, i16, []byte{0xf7, 0xff}},
		{"v3 _FillValue", zarr.FormatV3, []byte{0, 0}, `{"_FillValue": 7}`, i16, []byte{7, 0}},
		{"v3 missing_value", zarr.FormatV3, []byte{0, 0}, `{"missing_value": 9}`, i16, []byte{9, 0}},
		{"v3 _FillValue before missing_value", zarr.FormatV3, nil, `{"missing_value": 9, "_FillValue": 7}`, i16, []byte{7, 0}},
		{"v3 out of range", zarr.FormatV3, nil, `{"_FillValue": 70000}`, i16, nil},
		{"v3 not an integer", zarr.FormatV3, nil, `{"_FillValue": 1.5}`, i16, nil},
		{"v3 a string for an integer", zarr.FormatV3, nil, `{"_FillValue": "7"}`, i16, nil},
		{"v3 uint64 max", zarr.FormatV3, nil, `{"_FillValue": 18446744073709551615}`, u8, bytes.Repeat([]byte{0xff}, 8)},
		{"v3 negative uint64", zarr.FormatV3, nil, `{"_FillValue": -1}`, u8, nil},
		{"v3 xarray's base64 NaN", zarr.FormatV3, f64(0), `{"_FillValue": "AAAAAAAA+H8="}`, d, []byte{0, 0, 0, 0, 0, 0, 0xf8, 0x7f}},
		{"v3 xarray's base64 -9999 as float32", zarr.FormatV3, nil, `{"_FillValue": "AAAAAICHw8A="}`, s, f32(-9999)},
		{"v3 NaN spelled", zarr.FormatV3, nil, `{"_FillValue": "NaN"}`, s, f32(float32(math.NaN()))},
		{"v3 bare NaN", zarr.FormatV3, nil, `{"_FillValue": NaN}`, d, f64(math.NaN())},
		{"v3 -Infinity", zarr.FormatV3, nil, `{"_FillValue": "-Infinity"}`, d, f64(math.Inf(-1))},
		{"v3 a number for a float", zarr.FormatV3, nil, `{"_FillValue": -1e30}`, d, f64(-1e30)},
		{"v3 a one-item list", zarr.FormatV3, nil, `{"_FillValue": [3]}`, i16, []byte{3, 0}},
		{"v3 bad base64", zarr.FormatV3, nil, `{"_FillValue": "not base64!"}`, d, nil},
		{"v3 base64 of 4 bytes", zarr.FormatV3, nil, `{"_FillValue": "AADAfw=="}`, d, nil},
		{"v3 null", zarr.FormatV3, nil, `{"_FillValue": null}`, d, nil},
	} {
		got := ncFill(c.format, c.fill, attrs(c.attrs), c.t)
		if !bytes.Equal(got, c.want) {
			t.Errorf("%s: %x, want %x", c.name, got, c.want)
		}
	}
}

// TestENVIIgnoreValue: data.hdr's data ignore value is the fill value, as
// GDAL's Zarr driver reports NoData, non-finite ones spelled as GDAL parses
// them.
func TestENVIIgnoreValue(t *testing.T) {
	for _, c := range []struct {
		fill []byte
		t    elemType
		want string
		ok   bool
	}{
		{[]byte{0, 0}, elemType{kind: 'i', size: 2}, "0", true},
		{[]byte{0}, elemType{kind: 'b', size: 1}, "0", true},
		{binary.LittleEndian.AppendUint32(nil, math.Float32bits(float32(math.NaN()))), elemType{kind: 'f', size: 4}, "nan", true},
		{binary.LittleEndian.AppendUint64(nil, math.Float64bits(math.Inf(-1))), elemType{kind: 'f', size: 8}, "-inf", true},
		{binary.LittleEndian.AppendUint32(nil, math.Float32bits(0.1)), elemType{kind: 'f', size: 4}, "0.1", true},
		{nil, elemType{kind: 'i', size: 2}, "", false},
		{[]byte{1, 2}, elemType{kind: 'c', size: 8}, "", false},
	} {
		got, ok := enviIgnoreValue(c.fill, c.t)
		if got != c.want || ok != c.ok {
			t.Errorf("enviIgnoreValue(%x, %c%d) = %q, %v; want %q, %v", c.fill, c.t.kind, c.t.size, got, ok, c.want, c.ok)
		}
	}
}

// TestProjectedMapInfo: a WKT goes into the coordinate system string, an
// EPSG code alone only for WGS 84 / UTM.
func TestProjectedMapInfo(t *testing.T) {
	for _, c := range []struct {
		p    projection
		want string
	}{
		{projection{wkt: "PROJCS[\"x\",\n  GEOGCS[\"y\"]]"}, "map info = {Arbitrary, 1.5, 1.5, 500000, 4e+06, 30, 30, units=Meters}\ncoordinate system string = {PROJCS[\"x\", GEOGCS[\"y\"]]}\n"},
		{projection{wkt: "PROJCS[\"{\"]"}, ""},
		{projection{epsg: 32633}, "map info = {UTM, 1.5, 1.5, 500000, 4e+06, 30, 30, 33, North, WGS-84, units=Meters}\n"},
		{projection{epsg: 32760}, "map info = {UTM, 1.5, 1.5, 500000, 4e+06, 30, 30, 60, South, WGS-84, units=Meters}\n"},
		{projection{epsg: 4326}, "map info = {Geographic Lat/Lon, 1.5, 1.5, 500000, 4e+06, 30, 30, WGS-84, units=Degrees}\n"},
		{projection{epsg: 3857}, ""},
		{projection{epsg: 32600}, ""},
	} {
		if got := projectedMapInfo(&c.p, 500000, 4e6, 30, 30); got != c.want {
			t.Errorf("%+v: %q, want %q", c.p, got, c.want)
		}
	}
}

// FuzzNCFill: any attribute document gives a fill of the variable's size
// or none, for every format and type, never a panic.
func FuzzNCFill(f *testing.F) {
	for _, s := range []string{`{"_FillValue": "AAAAAAAA+H8="}`, `{"_FillValue": [1, 2]}`, `{"_FillValue": 1e400}`,
		`{"_FillValue": -9223372036854775809}`, `{"missing_value": "=="}`, `{"_FillValue": {"a": 1}}`, `{"_FillValue": NaN}`} {
		f.Add([]byte(s))
	}
	types := []elemType{{kind: 'i', size: 1}, {kind: 'u', size: 2}, {kind: 'i', size: 8}, {kind: 'u', size: 8},
		{kind: 'f', size: 4}, {kind: 'f', size: 8}, {kind: 'M', size: 8, unit: "ns"}, {kind: 'b', size: 1}, {kind: 'S', size: 3}}
	f.Fuzz(func(t *testing.T, doc []byte) {
		v, err := pyjson.Parse(doc)
		if err != nil || v.Kind != pyjson.Object {
			return
		}
		for _, typ := range types {
			for _, format := range []zarr.Format{zarr.FormatV2, zarr.FormatV3} {
				if got := ncFill(format, nil, v.Members, typ); got != nil && len(got) != typ.size {
					t.Fatalf("%c%d: fill of %d bytes", typ.kind, typ.size, len(got))
				}
			}
		}
	})
}
