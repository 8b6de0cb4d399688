package codec

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// v3Pipeline builds the pipeline of a zarr.json "codecs" list.
func v3Pipeline(t *testing.T, codecs string, spec ArraySpec) *Pipeline {
	t.Helper()
	var list []struct {
		Name          string `json:"name"`
		Configuration Config `json:"configuration"`
	}
	if err := json.Unmarshal([]byte(codecs), &list); err != nil {
		t.Fatal(err)
	}
	var cs []Codec
	for _, c := range list {
		codec, err := New(c.Name, c.Configuration)
		if err != nil {
			t.Fatalf("New(%s): %v", c.Name, err)
		}
		cs = append(cs, codec)
	}
	p, err := NewPipeline(cs, spec)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestNumcodecsDeltaZarrita decodes the zarrita.js fixtures written with
// numcodecs.delta (one also transposed) and compares with NumPy.
func TestNumcodecsDeltaZarrita(t *testing.T) {
	root := filepath.Join(peertest.Corpus(t), "zarrita.js", "v3", "data.zarr")
	cases := []struct {
		dir, chunk string
		shape      []int
		order      []int
	}{
		{"1d.contiguous.delta.i4", "c/0", []int{4}, []int{0}},
		{"3d.contiguous.delta.i4.mixed", "c/0/0/0", []int{3, 3, 3}, []int{1, 0, 2}},
	}
	for _, tc := range cases {
		meta, err := os.ReadFile(filepath.Join(root, tc.dir, "zarr.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			Codecs json.RawMessage `json:"codecs"`
		}
		if err := json.Unmarshal(meta, &m); err != nil {
			t.Fatal(err)
		}
		chunkPath := filepath.Join(root, tc.dir, tc.chunk)
		chunk, err := os.ReadFile(chunkPath)
		if err != nil {
			t.Fatal(err)
		}
		spec := ArraySpec{Shape: tc.shape, DataType: DataType{"int32", 4}, FillValue: make([]byte, 4)}
		got, err := v3Pipeline(t, string(m.Codecs), spec).Decode(chunk)
		if err != nil {
			t.Fatalf("%s: %v", tc.dir, err)
		}
		shape, _ := json.Marshal(tc.shape)
		order, _ := json.Marshal(tc.order)
		want := peertest.Oracle(t, "codec/numcodecs_delta_zarrita.py", chunkPath, string(shape), string(order))
		equalBytes(t, tc.dir, got, want)
	}
}

// TestNumcodecsArray checks that the array→array forms give what the
// bytes→bytes filters (tested against numcodecs) give, and the specs.
func TestNumcodecsArray(t *testing.T) {
	cases := []struct {
		name, v3, v2 string
		dt           DataType
		wantType     DataType
		wantShape    []int
	}{
		{"numcodecs.delta", `{"dtype":"<i8","astype":"<i2"}`, `{"id":"delta","dtype":"<i8","astype":"<i2"}`,
			DataType{"int64", 8}, DataType{"int16", 2}, []int{4, 5}},
		{"numcodecs.delta", `{}`, `{"id":"delta","dtype":"<f4"}`, DataType{"float32", 4}, DataType{"float32", 4}, []int{4, 5}},
		{"numcodecs.fixedscaleoffset", `{"dtype":"float64","astype":"uint8","scale":10,"offset":1000}`,
			`{"id":"fixedscaleoffset","dtype":"<f8","astype":"|u1","scale":10,"offset":1000}`,
			DataType{"float64", 8}, DataType{"uint8", 1}, []int{4, 5}},
		{"numcodecs.quantize", `{"digits":2,"dtype":">f8","astype":"<f4"}`, `{"id":"quantize","digits":2,"dtype":"<f8","astype":"<f4"}`,
			DataType{"float64", 8}, DataType{"float32", 4}, []int{4, 5}},
		{"numcodecs.astype", `{"encode_dtype":"<f4","decode_dtype":"<f8"}`, `{"id":"astype","encode_dtype":"<f4","decode_dtype":"<f8"}`,
			DataType{"float64", 8}, DataType{"float32", 4}, []int{4, 5}},
		{"numcodecs.packbits", `{}`, `{"id":"packbits"}`, DataType{"bool", 1}, DataType{"uint8", 1}, []int{4}},
	}
	for _, tc := range cases {
		t.Run(tc.name+tc.v3, func(t *testing.T) {
			c := newCodec(t, tc.name, tc.v3).(ArrayToArray)
			spec := ArraySpec{Shape: []int{4, 5}, DataType: tc.dt, FillValue: make([]byte, tc.dt.Size)}
			enc, err := c.EncodedSpec(spec)
			if err != nil {
				t.Fatal(err)
			}
			if enc.DataType != tc.wantType || fmt.Sprint(enc.Shape) != fmt.Sprint(tc.wantShape) {
				t.Errorf("EncodedSpec = %v %v, want %v %v", enc.DataType, enc.Shape, tc.wantType, tc.wantShape)
			}
			nt, _ := ParseNumpyType(tc.dt.Name)
			in := smallFloats(floatType(8), 20, 3)
			if nt.Kind != 'f' || nt.Size != 8 {
				in = typedData(nt, 20, 3)
			}
			got, err := c.Encode(in, spec)
			if err != nil {
				t.Fatal(err)
			}
			f := mustNew(t, tc.v2).(BytesToBytes)
			want, _ := f.Encode(in)
			equalBytes(t, "encode", got, want)
			dec, err := c.Decode(got, spec)
			if err != nil {
				t.Fatal(err)
			}
			wantDec, _ := f.Decode(want, len(in))
			equalBytes(t, "decode", dec, wantDec)
		})
	}
}

func TestNumcodecsArrayErrors(t *testing.T) {
	for _, tc := range []struct{ name, cfg string }{
		{"numcodecs.delta", `{"dtype":"<U4"}`},
		{"numcodecs.delta", `{"dtype":"x"}`},
		{"numcodecs.quantize", `{"dtype":"<f8"}`},
		{"numcodecs.packbits", `{"padding_encoding":"first_byte"}`},
	} {
		var cfg Config
		json.Unmarshal([]byte(tc.cfg), &cfg)
		if _, err := New(tc.name, cfg); err == nil {
			t.Errorf("%s %s accepted", tc.name, tc.cfg)
		}
	}
	c := newCodec(t, "numcodecs.delta", `{"dtype":"int16"}`).(ArrayToArray)
	if _, err := c.EncodedSpec(ArraySpec{Shape: []int{2}, DataType: DataType{"int32", 4}}); err == nil {
		t.Error("dtype int16 on an int32 array accepted")
	}
	if _, err := newCodec(t, "numcodecs.packbits", `{}`).(ArrayToArray).EncodedSpec(ArraySpec{Shape: []int{2}, DataType: DataType{"int8", 1}}); err == nil {
		t.Error("packbits on int8 accepted")
	}
}

// TestZarrPythonV3Codecs decodes the chunks zarr-python 3 wrote with
// numcodecs.* and v3 codecs (zarrs test data) and compares them with the
// same array stored without compression.
func TestZarrPythonV3Codecs(t *testing.T) {
	root := filepath.Join(peertest.Corpus(t), "zarrs", "v3_zarr_python")
	type meta struct {
		DataType string          `json:"data_type"`
		Codecs   json.RawMessage `json:"codecs"`
	}
	read := func(name string) (meta, map[string][]byte) {
		b, err := os.ReadFile(filepath.Join(root, name, "zarr.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m meta
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		chunks := map[string][]byte{}
		for _, k := range []string{"0/0", "0/1", "1/0", "1/1"} {
			if chunks[k], err = os.ReadFile(filepath.Join(root, name, "c", k)); err != nil {
				t.Fatal(err)
			}
		}
		return m, chunks
	}
	spec := ArraySpec{Shape: []int{5, 5}, DataType: DataType{"float32", 4}, FillValue: make([]byte, 4)}
	noneMeta, want := read("array_none.zarr")
	if noneMeta.DataType != "float32" {
		t.Fatalf("array_none is %s", noneMeta.DataType)
	}
	none := v3Pipeline(t, string(noneMeta.Codecs), spec)
	for _, name := range []string{"array_adler32.zarr", "array_fletcher32.zarr", "array_zlib.zarr", "array_bz2.zarr", "array_gzip.zarr", "array_zstd.zarr"} {
		m, chunks := read(name)
		p := v3Pipeline(t, string(m.Codecs), spec)
		for k, chunk := range chunks {
			got, err := p.Decode(chunk)
			if err != nil {
				t.Errorf("%s c/%s: %v", name, k, err)
				continue
			}
			w, err := none.Decode(want[k])
			if err != nil {
				t.Fatal(err)
			}
			equalBytes(t, name+" c/"+k, got, w)
		}
	}
}
