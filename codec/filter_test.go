package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// typedData returns n reproducible elements of type t: integers over
// their whole range, floats in ±1000 with fractions, bools 0 or 1.
func typedData(t NumpyType, n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 7))
	out := make([]byte, n*t.Size)
	for i := 0; i < n; i++ {
		b := out[i*t.Size : (i+1)*t.Size]
		switch t.Kind {
		case 'b':
			b[0] = byte(r.IntN(2))
		case 'f':
			t.putFloat(b, (r.Float64()-0.5)*2000)
		default:
			t.putBits(b, r.Uint64())
		}
	}
	return out
}

// smallFloats returns floats of type t in 0…100 with fractions, which fit
// every integer type a filter may convert them to.
func smallFloats(t NumpyType, n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 9))
	out := make([]byte, n*t.Size)
	for i := 0; i < n; i++ {
		t.putFloat(out[i*t.Size:(i+1)*t.Size], r.Float64()*100)
	}
	return out
}

// filterPeerCases are filters with their input data.
func filterPeerCases(t *testing.T) []peerCase {
	typ := func(s string) NumpyType {
		nt, err := ParseNumpyType(s)
		if err != nil {
			t.Fatal(err)
		}
		return nt
	}
	var cases []peerCase
	add := func(config, dtype string, raw []byte) {
		cases = append(cases, peerCase{Config: config, DType: dtype, Raw: raw})
	}
	for i, dt := range []string{"<i4", "<u2", "|i1", "<i8", "<f4", "<f8", "|b1", ">i4", ">f8", "<f2", "<m8[ns]"} {
		add(fmt.Sprintf(`{"id":"delta","dtype":%q}`, dt), dt, typedData(typ(dt), 1000, uint64(i)))
	}
	for i, c := range [][2]string{{"<i8", "<i2"}, {"<i2", "<i4"}, {"<u1", "<i2"}, {"<f4", "<f8"}, {"<f8", "<f4"}, {"<i4", "<f8"}, {">i2", "<i2"}} {
		add(fmt.Sprintf(`{"id":"delta","dtype":%q,"astype":%q}`, c[0], c[1]), c[0], typedData(typ(c[0]), 500, uint64(100+i)))
	}
	for i, c := range []string{
		`{"id":"fixedscaleoffset","dtype":"<f8","astype":"|u1","scale":10,"offset":1000}`,
		`{"id":"fixedscaleoffset","dtype":"<f8","astype":"<i2","scale":100.0,"offset":0.5}`,
		`{"id":"fixedscaleoffset","dtype":"<f4","astype":"<i4","scale":1000,"offset":0}`,
		`{"id":"fixedscaleoffset","dtype":"<f2","astype":"<i2","scale":10,"offset":1000}`,
		`{"id":"fixedscaleoffset","dtype":"<f2","astype":"<f2","scale":3,"offset":0.25}`,
		`{"id":"fixedscaleoffset","dtype":"<f4","astype":"<f4","scale":1e12,"offset":7}`,
		`{"id":"fixedscaleoffset","dtype":"<f4","astype":"|i1","scale":0.5,"offset":40}`,
		`{"id":"fixedscaleoffset","dtype":">f8","astype":">i4","scale":1000000,"offset":-3}`,
		`{"id":"fixedscaleoffset","dtype":"<f8","astype":"<f8","scale":1e12,"offset":1000}`,
	} {
		var cfg struct{ DType string }
		json.Unmarshal([]byte(c), &cfg)
		add(c, cfg.DType, smallFloats(typ(cfg.DType), 500, uint64(200+i)))
	}
	for _, digits := range []int{-2, -1, 0, 1, 2, 3, 5, 12} {
		for _, c := range [][2]string{{"<f8", "<f8"}, {"<f8", "<f2"}, {"<f8", "<f4"}, {"<f4", "<f4"}, {"<f2", "<f2"}} {
			cfg := fmt.Sprintf(`{"id":"quantize","digits":%d,"dtype":%q,"astype":%q}`, digits, c[0], c[1])
			add(cfg, c[0], smallFloats(typ(c[0]), 300, uint64(300+digits)))
		}
	}
	for i, c := range [][2]string{{"<f8", "<f4"}, {"<i4", "<i2"}, {"<f8", "<i4"}, {">f8", "<f4"}, {"<i2", "<f8"}, {"|u1", "<i4"}, {"<f4", "|u1"}, {"<f8", "<f2"}, {"<i8", "<f4"}, {"<u8", "<f8"}, {"|b1", "<f4"}} {
		data := typedData(typ(c[0]), 400, uint64(400+i))
		if typ(c[0]).Kind == 'f' {
			data = smallFloats(typ(c[0]), 400, uint64(400+i))
		}
		add(fmt.Sprintf(`{"id":"astype","decode_dtype":%q,"encode_dtype":%q}`, c[0], c[1]), c[0], data)
	}
	for _, es := range []int{0, 1, 2, 3, 4, 8, 16} {
		add(fmt.Sprintf(`{"id":"shuffle","elementsize":%d}`, es), "", testData(48*17, uint64(es)))
	}
	for _, n := range []int{0, 1, 7, 8, 9, 1000} {
		add(`{"id":"packbits"}`, "|b1", typedData(NumpyType{Kind: 'b', Size: 1}, n, uint64(n)))
	}
	labels := []string{"ƒöõ", "ßàř", "ßāẑ", "ƪùüx", "a", "toolong"}
	lab, _ := json.Marshal(labels)
	values := append(append([]string{}, labels...), "", "other", "ßàř", "a")
	var u4 []byte
	for _, v := range values {
		b := make([]byte, 16)
		putUTF32(b, NumpyType{Kind: 'U', Size: 16}, v)
		u4 = append(u4, b...)
	}
	add(`{"id":"categorize","dtype":"<U4","astype":"|u1","labels":`+string(lab)+`}`, "<U4", u4)
	add(`{"id":"categorize","dtype":"|O","astype":"<u2","labels":`+string(lab)+`}`, "|O", vlenLayout(values))
	return cases
}

// TestFiltersPeer: zarrfs encodes random data byte for byte as numcodecs
// does, and decodes numcodecs' encoding as numcodecs does.
func TestFiltersPeer(t *testing.T) {
	cases := filterPeerCases(t)
	for i := range cases {
		enc, err := mustNew(t, cases[i].Config).(BytesToBytes).Encode(cases[i].Raw)
		if err != nil {
			t.Fatalf("%s: encode: %v", cases[i].Config, err)
		}
		cases[i].Ours = enc
	}
	runNumcodecs(t, cases)
	for _, c := range cases {
		codec := mustNew(t, c.Config).(BytesToBytes)
		equalBytes(t, c.Config+": encoding", c.Ours, c.Theirs)
		size := len(c.TheirsDecoded)
		if want := codec.EncodedSize(size); want >= 0 && want != len(c.Theirs) {
			t.Errorf("%s: EncodedSize(%d) = %d, numcodecs wrote %d bytes", c.Config, size, want, len(c.Theirs))
		}
		got, err := codec.Decode(c.Theirs, size)
		if err != nil {
			t.Errorf("%s: decode: %v", c.Config, err)
			continue
		}
		// TheirsDecoded is numcodecs' decoding of Ours; Ours equals Theirs
		// when the encoding test passes.
		equalBytes(t, c.Config+": decoding", got, c.TheirsDecoded)
	}
}

// TestFilterFixtures decodes and encodes the numcodecs fixtures; the
// decoding is compared with numcodecs' own decoding (the filters may be
// lossy), the encoding with the fixture byte for byte.
func TestFilterFixtures(t *testing.T) {
	var fs []fixture
	for _, dir := range []string{"delta/bool", "delta/float32", "delta/float64", "delta/int32", "delta/uint16",
		"fixedscaleoffset", "quantize", "shuffle", "astype/f", "astype/i", "packbits", "categorize/U", "categorize/O"} {
		fs = append(fs, fixtures(t, dir)...)
	}
	dir := t.TempDir()
	var args []string
	for i, f := range fs {
		p := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(p+".config", []byte(f.Config), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p+".enc", f.Encoded, 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, p, f.Array)
	}
	peertest.Oracle(t, "codec/filter_fixtures.py", args...)
	for i, f := range fs {
		p := filepath.Join(dir, fmt.Sprint(i))
		want, err := os.ReadFile(p + ".dec")
		if err != nil {
			t.Fatal(err)
		}
		arr, err := os.ReadFile(p + ".arr")
		if err != nil {
			t.Fatal(err)
		}
		c := mustNew(t, f.Config).(BytesToBytes)
		size := len(want)
		if strings.Contains(f.Config, `"|O"`) {
			size = -1
		}
		got, err := c.Decode(f.Encoded, size)
		if err != nil {
			t.Errorf("%s: decode: %v", f.Name, err)
			continue
		}
		equalBytes(t, f.Name+" decode", got, want)
		enc, err := c.Encode(arr)
		if err != nil {
			t.Errorf("%s: encode: %v", f.Name, err)
			continue
		}
		equalBytes(t, f.Name+" encode", enc, f.Encoded)
	}
}

func TestFilterConfigErrors(t *testing.T) {
	bad := []string{
		`{"id":"delta"}`,
		`{"id":"delta","dtype":"<U4"}`,
		`{"id":"delta","dtype":"<i4","astype":"x"}`,
		`{"id":"fixedscaleoffset","dtype":"<f8","offset":1}`,
		`{"id":"fixedscaleoffset","dtype":"<f8","scale":"a","offset":1}`,
		`{"id":"quantize","dtype":"<f8"}`,
		`{"id":"quantize","digits":2,"dtype":"<i4"}`,
		`{"id":"astype","encode_dtype":"<f4"}`,
		`{"id":"shuffle","elementsize":-1}`,
		`{"id":"packbits","padding_encoding":"first_byte"}`,
		`{"id":"categorize","dtype":"<i4","labels":["a"]}`,
		`{"id":"categorize","dtype":"<U4","labels":[1]}`,
		`{"id":"categorize","dtype":"<U4","astype":"<f4","labels":["a"]}`,
		`{"id":"bitround","keepbits":-1}`,
		`{"id":"bitround"}`,
	}
	for _, config := range bad {
		var cfg Config
		if err := json.Unmarshal([]byte(config), &cfg); err != nil {
			t.Fatal(err)
		}
		var id string
		json.Unmarshal(cfg["id"], &id)
		delete(cfg, "id")
		if _, err := New(id, cfg); err == nil {
			t.Errorf("%s accepted", config)
		}
	}
}

func TestFilterCorrupt(t *testing.T) {
	cases := []struct {
		config string
		data   []byte
		size   int
	}{
		{`{"id":"delta","dtype":"<i4"}`, make([]byte, 7), -1},
		{`{"id":"delta","dtype":"<i4"}`, make([]byte, 8), 12},
		{`{"id":"delta","dtype":"<i8","astype":"<i2"}`, make([]byte, 4), 8},
		{`{"id":"astype","decode_dtype":"<f8","encode_dtype":"<f4"}`, make([]byte, 5), -1},
		{`{"id":"quantize","digits":1,"dtype":"<f8","astype":"<f2"}`, make([]byte, 4), 8},
		{`{"id":"fixedscaleoffset","dtype":"<f8","astype":"|u1","scale":1,"offset":0}`, make([]byte, 3), 8},
		{`{"id":"shuffle","elementsize":4}`, make([]byte, 8), 9},
		{`{"id":"packbits"}`, nil, 0},
		{`{"id":"packbits"}`, []byte{8, 0}, -1},
		{`{"id":"packbits"}`, []byte{1}, -1},
		{`{"id":"packbits"}`, []byte{3, 0}, 4},
		{`{"id":"categorize","dtype":"<U4","astype":"<u2","labels":["a"]}`, make([]byte, 3), -1},
		{`{"id":"categorize","dtype":"<U4","labels":["a"]}`, make([]byte, 3), 16},
		{`{"id":"categorize","dtype":"|O","labels":["a"]}`, []byte{1, 1}, 5},
	}
	for _, tc := range cases {
		_, err := mustNew(t, tc.config).(BytesToBytes).Decode(tc.data, tc.size)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: Decode(%d bytes, size %d) = %v, want ErrCorrupt", tc.config, len(tc.data), tc.size, err)
		}
	}
}

func TestBitRound(t *testing.T) {
	// numcodecs' BitRound in numpy, on float32 and float64 data.
	cases := []struct {
		name string
		dt   DataType
		typ  string
	}{{"float32", DataType{"float32", 4}, "<f4"}, {"float64", DataType{"float64", 8}, "<f8"}, {"float16", DataType{"float16", 2}, "<f2"}}
	dir := t.TempDir()
	var args []string
	type item struct {
		raw, keep string
		dt        DataType
		keepbits  int
	}
	var items []item
	for i, c := range cases {
		nt, _ := ParseNumpyType(c.typ)
		for _, keep := range []int{0, 1, 5, 10} {
			raw := filepath.Join(dir, fmt.Sprintf("%d-%d", i, keep))
			data := typedData(nt, 300, uint64(keep))
			if err := os.WriteFile(raw, data, 0o644); err != nil {
				t.Fatal(err)
			}
			items = append(items, item{raw, raw + ".out", c.dt, keep})
			args = append(args, raw, c.typ, fmt.Sprint(keep))
		}
	}
	peertest.Oracle(t, "codec/bit_round.py", args...)
	for _, it := range items {
		in, _ := os.ReadFile(it.raw)
		want, err := os.ReadFile(it.keep)
		if err != nil {
			t.Fatal(err)
		}
		spec := ArraySpec{Shape: []int{len(in) / it.dt.Size}, DataType: it.dt}
		c := newCodec(t, "bitround", fmt.Sprintf(`{"keepbits":%d}`, it.keepbits)).(ArrayToArray)
		got, err := c.Encode(in, spec)
		if err != nil {
			t.Fatal(err)
		}
		equalBytes(t, fmt.Sprintf("%s keepbits %d", it.dt.Name, it.keepbits), got, want)
		dec, err := c.Decode(got, spec)
		if err != nil {
			t.Fatal(err)
		}
		equalBytes(t, "decode is the identity", dec, got)
	}
	if _, err := (BitRound{Keepbits: 24}).Encode(make([]byte, 4), ArraySpec{Shape: []int{1}, DataType: DataType{"float32", 4}}); err == nil {
		t.Error("keepbits 24 accepted for float32")
	}
	if _, err := (BitRound{Keepbits: 2}).Encode(make([]byte, 4), ArraySpec{Shape: []int{1}, DataType: DataType{"int32", 4}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("int32: %v, want ErrUnsupported", err)
	}
}

func TestQuantizeScale(t *testing.T) {
	// numcodecs: scale = 2**ceil(log2(10**-exp)), exp = floor(log10(10**-digits)).
	want := map[int]float64{0: 1, 1: 16, 2: 128, 3: 1024, 5: 131072, 12: 1 << 40, -1: 0.125, -2: 1.0 / 64}
	for d, w := range want {
		if got := quantizeScale(d); got != w {
			t.Errorf("quantizeScale(%d) = %v, want %v", d, got, w)
		}
	}
}

func TestHalf(t *testing.T) {
	for _, v := range []float64{0, 1, -2, 0.1, 65504, 65519, 65520, 1e-8, 5.96e-8, 2.98e-8, 6.1e-5, math.Inf(1), 1.0009765625, 1.00048828125, 3.0517578125e-05} {
		h := float64ToHalf(v)
		back := float64(halfToFloat32(h))
		// Round trips of a rounded value are exact.
		if float64ToHalf(back) != h {
			t.Errorf("%v: half %04x does not round-trip", v, h)
		}
	}
	if h := float64ToHalf(1.00048828125); h != 0x3c00 { // tie between 1 and 1+2^-10 rounds to even
		t.Errorf("tie rounds to %04x", h)
	}
	if h := float64ToHalf(65520); h != 0x7c00 {
		t.Errorf("65520 rounds to %04x, want infinity", h)
	}
	if h := float64ToHalf(math.NaN()); h&0x7c00 != 0x7c00 || h&0x3ff == 0 {
		t.Errorf("NaN is %04x", h)
	}
}

func FuzzDeltaDecode(f *testing.F) {
	fuzzFilterDecode(f, Delta{DType: NumpyType{Kind: 'i', Size: 4}, AsType: NumpyType{Kind: 'i', Size: 4}})
}
func FuzzShuffleDecode(f *testing.F)  { fuzzBytesToBytes(f, Shuffle{ElementSize: 4}) }
func FuzzPackBitsDecode(f *testing.F) { fuzzFilterDecode(f, PackBits{}) }
func FuzzAsTypeDecode(f *testing.F) {
	fuzzFilterDecode(f, AsType{EncodeType: NumpyType{Kind: 'f', Size: 4}, DecodeType: NumpyType{Kind: 'i', Size: 8}})
}
func FuzzFixedScaleOffsetDecode(f *testing.F) {
	fuzzFilterDecode(f, FixedScaleOffset{DType: NumpyType{Kind: 'f', Size: 8}, AsType: NumpyType{Kind: 'i', Size: 2}, Scale: scalar{v: 10, isInt: true, i: 10}})
}
func FuzzQuantizeDecode(f *testing.F) {
	fuzzFilterDecode(f, Quantize{Digits: 2, DType: NumpyType{Kind: 'f', Size: 8}, AsType: NumpyType{Kind: 'f', Size: 2}})
}
func FuzzCategorizeDecode(f *testing.F) {
	fuzzFilterDecode(f, Categorize{Labels: []string{"a", "bb"}, DType: NumpyType{Kind: 'O'}, AsType: NumpyType{Kind: 'u', Size: 1}})
}

// fuzzFilterDecode checks that a lossy or size-changing filter's decoder
// never panics and returns the size asked for.
func fuzzFilterDecode(f *testing.F, c BytesToBytes) {
	f.Add([]byte{1, 2, 3, 4, 5, 6, 7, 8}, -1)
	for _, b := range hostileSeeds(f, "raw-") {
		f.Add(b, 8192)
	}
	f.Fuzz(func(t *testing.T, data []byte, size int) {
		if size > 1<<20 || size < -1 {
			size = -1
		}
		out, err := c.Decode(data, size)
		if err == nil && size >= 0 && len(out) != size {
			t.Fatalf("Decode gave %d bytes, want %d", len(out), size)
		}
	})
}
