package view

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/zarrfs/zarrfs/internal/pyjson"
)

// TestNetCDFTiny lays out the "tiny" example of the NetCDF classic format
// specification (netCDF-c docs/file_format_specifications.md): a short
// vx(dim = 5). Its header must be the 80 bytes the specification dumps,
// and the variable must begin at offset 80 with vsize 12.
func TestNetCDFTiny(t *testing.T) {
	l, err := layoutNetCDF(nil, []ncVarSpec{{
		name: "vx", elem: elemType{kind: 'i', size: 2}, shape: []int64{5}, dimNames: []string{"dim"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	want, _ := hex.DecodeString("43444601" + "00000000" + "0000000a" + "00000001" + "00000003" + "64696d00" + "00000005" +
		"00000000" + "00000000" + "0000000b" + "00000001" + "00000002" + "76780000" + "00000001" + "00000000" +
		"00000000" + "00000000" + "00000003" + "0000000c" + "00000050")
	if !bytes.Equal(l.header, want) {
		t.Errorf("header\n%x\nwant\n%x", l.header, want)
	}
	if l.version != 1 || len(l.vars) != 1 || l.vars[0].begin != 80 || l.vars[0].vsize != 12 || l.size != 92 {
		t.Errorf("layout: version %d, vars %+v, size %d", l.version, l.vars, l.size)
	}
}

// TestNetCDFFormat checks the choice of format: CDF-1 where netCDF-c's
// limits allow it (only the last variable over 2^31-4 bytes, offsets under
// 2^31), CDF-2 where only its 64-bit offsets are needed, CDF-5 for types
// and sizes the others lack.
func TestNetCDFFormat(t *testing.T) {
	f8 := elemType{kind: 'f', size: 8}
	v := func(name string, n int64, t elemType) ncVarSpec {
		return ncVarSpec{name: name, elem: t, shape: []int64{n}, dimNames: []string{name}}
	}
	for _, c := range []struct {
		name    string
		vars    []ncVarSpec
		version byte
		last    int64 // the size of the variable laid out last
	}{
		{"small", []ncVarSpec{v("a", 10, f8)}, 1, 80},
		{"uint8: a byte with _Unsigned", []ncVarSpec{v("a", 10, elemType{kind: 'u', size: 1})}, 1, 10},
		{"uint32: an int with _Unsigned", []ncVarSpec{v("a", 10, elemType{kind: 'u', size: 4})}, 1, 40},
		{"uint64", []ncVarSpec{v("a", 10, elemType{kind: 'u', size: 8})}, 5, 80},
		{"datetime", []ncVarSpec{v("a", 10, elemType{kind: 'M', size: 8, unit: "ns"})}, 5, 80},
		{"datetime as int32", []ncVarSpec{{name: "a", elem: elemType{kind: 'M', size: 8, unit: "h"}, shape: []int64{10}, as: asInt32}}, 1, 40},
		{"int64 as double", []ncVarSpec{{name: "a", elem: elemType{kind: 'i', size: 8}, shape: []int64{10}, as: asDouble}}, 1, 80},
		{"one huge, moved last", []ncVarSpec{v("huge", 600e6, f8), v("b", 10, f8)}, 1, 4.8e9},
		{"over 2 GiB and over 4 GiB", []ncVarSpec{v("a", 300e6, f8), v("b", 600e6, f8)}, 2, 4.8e9},
		{"two over 4 GiB", []ncVarSpec{v("a", 600e6, f8), v("b", 600e6, f8)}, 5, 4.8e9},
		{"dimension over 2^31-1", []ncVarSpec{v("a", math.MaxInt32+1, elemType{kind: 'i', size: 1})}, 5, math.MaxInt32 + 1},
	} {
		l, err := layoutNetCDF(nil, c.vars)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if l.version != c.version || l.vars[len(l.vars)-1].size != c.last {
			t.Errorf("%s: CDF-%d with the last variable of %d bytes, want CDF-%d and %d", c.name, l.version,
				l.vars[len(l.vars)-1].size, c.version, c.last)
		}
		checkHeader(t, l)
	}
}

// TestNetCDFDimensions: dimension names from the arrays, NAME_dimI for
// unnamed ones, NAME_LENGTH for a name used before with another length.
func TestNetCDFDimensions(t *testing.T) {
	f4 := elemType{kind: 'f', size: 4}
	dims, hvars := ncDimensions([]ncVarSpec{
		{name: "a", elem: f4, shape: []int64{3, 4}, dimNames: []string{"y", "x"}},
		{name: "b", elem: f4, shape: []int64{4}, dimNames: []string{"x"}},
		{name: "c", elem: f4, shape: []int64{5, 2}},
		{name: "d", elem: f4, shape: []int64{5, 6}, dimNames: []string{"x", ""}},
		{name: "e", elem: elemType{kind: 'S', size: 7}, shape: []int64{2}, dimNames: []string{"x/1"}},
	})
	var got []string
	for _, d := range dims {
		got = append(got, fmt.Sprintf("%s=%d", d.name, d.len))
	}
	want := "y=3 x=4 c_dim0=5 c_dim1=2 x_5=5 d_dim1=6 x_1=2 string7=7"
	if strings.Join(got, " ") != want {
		t.Errorf("dimensions %s, want %s", strings.Join(got, " "), want)
	}
	if fmt.Sprint(hvars[3].dims) != "[4 5]" || fmt.Sprint(hvars[4].dims) != "[6 7]" {
		t.Errorf("dimension ids %v %v", hvars[3].dims, hvars[4].dims)
	}
}

// TestNetCDFAttributes: every JSON type as a NetCDF attribute.
func TestNetCDFAttributes(t *testing.T) {
	v, err := pyjson.Parse([]byte(`{"s": "é", "i": 42, "big": 1099511627776, "f": 2.5, "nan": NaN, "inf": -Infinity,
		"t": true, "null": null, "ints": [1, 2], "mixed": [1, "a"], "empty": [], "o": {"a": [true, null]}, "bools": [false, true],
		"floats": [1, 2.5], "": 1, "/bad\u0001": 2, "s": "again"}`))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		cdf5 bool
		want string
	}{
		{false, `s char "é"; i int 42; big double 1.099511627776e+12; f double 2.5; nan double NaN; inf double -Inf; ` +
			`t byte 1; ints int 1 2; mixed char "[1,\"a\"]"; empty char "[]"; o char "{\"a\":[true,null]}"; ` +
			`bools byte 0 1; floats double 1 2.5; _ int 1; _bad_ int 2; s_2 char "again"`},
		{true, `s char "é"; i int 42; big int64 1099511627776; f double 2.5; nan double NaN; inf double -Inf; ` +
			`t byte 1; ints int 1 2; mixed char "[1,\"a\"]"; empty char "[]"; o char "{\"a\":[true,null]}"; ` +
			`bools byte 0 1; floats double 1 2.5; _ int 1; _bad_ int 2; s_2 char "again"`},
	} {
		var got []string
		for _, a := range ncAttributes(v.Members, c.cdf5, nil) {
			got = append(got, describeAttr(a))
		}
		if g := strings.Join(got, "; "); g != c.want {
			t.Errorf("cdf5 %v:\n got %s\nwant %s", c.cdf5, g, c.want)
		}
	}
}

func describeAttr(a ncAttr) string {
	names := map[int32]string{ncByte: "byte", ncChar: "char", ncInt: "int", ncInt64: "int64", ncDouble: "double"}
	s := a.name + " " + names[a.typ]
	if a.typ == ncChar {
		return s + fmt.Sprintf(" %q", a.data)
	}
	for i := int64(0); i < a.n; i++ {
		switch a.typ {
		case ncByte:
			s += fmt.Sprintf(" %d", int8(a.data[i]))
		case ncInt:
			s += fmt.Sprintf(" %d", int32(binary.BigEndian.Uint32(a.data[4*i:])))
		case ncInt64:
			s += fmt.Sprintf(" %d", int64(binary.BigEndian.Uint64(a.data[8*i:])))
		case ncDouble:
			s += fmt.Sprintf(" %v", math.Float64frombits(binary.BigEndian.Uint64(a.data[8*i:])))
		}
	}
	return s
}

// checkHeader parses l's header as a NetCDF reader does and fails t unless
// it is well formed: it ends where the first variable begins, every name
// is valid, the variables' offsets follow each other.
func checkHeader(t testing.TB, l *ncLayout) {
	t.Helper()
	r := ncReader{b: l.header, v5: l.version == 5}
	if string(r.next(3)) != "CDF" || r.next(1)[0] != l.version {
		t.Fatal("bad magic")
	}
	r.count()
	var dimLens []int64
	r.list(0x0a, func() {
		r.name(t)
		dimLens = append(dimLens, r.count())
	})
	r.attrs(t)
	i := 0
	r.list(0x0b, func() {
		r.name(t)
		nd := r.count()
		for range nd {
			if d := r.count(); d < 0 || d >= int64(len(dimLens)) {
				t.Fatalf("variable %d: dimension id %d of %d", i, d, len(dimLens))
			}
		}
		r.attrs(t)
		r.u32()
		r.count()
		var begin int64
		if l.version == 1 {
			begin = int64(r.u32())
		} else {
			begin = int64(binary.BigEndian.Uint64(r.next(8)))
		}
		if begin != l.vars[i].begin {
			t.Fatalf("variable %d begins at %d, layout says %d", i, begin, l.vars[i].begin)
		}
		i++
	})
	if r.err != nil {
		t.Fatalf("header: %v", r.err)
	}
	if r.off != len(l.header) || i != len(l.vars) {
		t.Fatalf("header parsed to %d of %d bytes, %d of %d variables", r.off, len(l.header), i, len(l.vars))
	}
	if len(l.vars) > 0 && l.vars[0].begin != int64(len(l.header)) {
		t.Fatalf("first variable at %d, header %d bytes", l.vars[0].begin, len(l.header))
	}
	for j := 1; j < len(l.vars); j++ {
		if l.vars[j].begin != l.vars[j-1].begin+l.vars[j-1].vsize {
			t.Fatalf("variable %d does not follow variable %d", j, j-1)
		}
	}
}

type ncReader struct {
	b   []byte
	off int
	v5  bool
	err error
}

func (r *ncReader) next(n int) []byte {
	if r.err != nil || n < 0 || r.off+n > len(r.b) {
		if r.err == nil {
			r.err = io.ErrUnexpectedEOF
		}
		return make([]byte, max(n, 8))
	}
	r.off += n
	return r.b[r.off-n : r.off]
}

func (r *ncReader) u32() uint32 { return binary.BigEndian.Uint32(r.next(4)) }

func (r *ncReader) count() int64 {
	if r.v5 {
		return int64(binary.BigEndian.Uint64(r.next(8)))
	}
	return int64(r.u32())
}

func (r *ncReader) list(tag uint32, item func()) {
	got := r.u32()
	n := r.count()
	if got == 0 && n == 0 {
		return
	}
	if got != tag || n < 0 || n > int64(len(r.b)) {
		r.err = errors.New("bad list")
		return
	}
	for range n {
		if r.err != nil {
			return
		}
		item()
	}
}

func (r *ncReader) name(t testing.TB) string {
	n := r.count()
	if n > int64(len(r.b)) {
		r.err = errors.New("bad name length")
		return ""
	}
	s := string(r.next(int(n)))
	r.next((4 - int(n)%4) % 4)
	if r.err == nil && (s == "" || !utf8.ValidString(s) || strings.ContainsAny(s, "/\x00") || strings.HasSuffix(s, " ")) {
		t.Fatalf("invalid NetCDF name %q", s)
	}
	return s
}

func (r *ncReader) attrs(t testing.TB) {
	r.list(0x0c, func() {
		r.name(t)
		typ := r.u32()
		n := r.count()
		size := map[uint32]int64{1: 1, 2: 1, 3: 2, 4: 4, 5: 4, 6: 8, 7: 1, 8: 2, 9: 4, 10: 8, 11: 8}[typ]
		if size == 0 || n < 0 || n > int64(len(r.b)) {
			r.err = fmt.Errorf("bad attribute type %d or length %d", typ, n)
			return
		}
		r.next(int(n * size))
		r.next(int((4 - n*size%4) % 4))
	})
}

// FuzzNetCDFHeader lays out a file of two variables named by the fuzzer,
// with dimension names and attributes (JSON, Python's NaN included) of its
// choosing: the header must parse, with valid names and consistent
// offsets, and reading it back must give the header's bytes.
func FuzzNetCDFHeader(f *testing.F) {
	f.Add("temperature", "lat", `{"units": "K", "n": [1, 2.5, NaN], "o": {"a": null}}`, `{"title": "x"}`)
	f.Add("", "", `{"": "", " ": [], "a/b": [true, false]}`, `{"big": 18446744073709551615}`)
	f.Add("é\x00/ ", "_\xff ", `{"x": -Infinity}`, `[]`)
	f.Fuzz(func(t *testing.T, name, dim, attrs, gattrs string) {
		var va, ga []pyjson.Field
		if v, err := pyjson.Parse([]byte(attrs)); err == nil {
			va = v.Members
		}
		if v, err := pyjson.Parse([]byte(gattrs)); err == nil {
			ga = v.Members
		}
		vars := []ncVarSpec{
			{name: name, elem: elemType{kind: 'f', size: 4}, shape: []int64{3, 2}, dimNames: []string{dim, name}, attrs: va, fill: []byte{0, 0, 0xc0, 0x7f}},
			{name: name, elem: elemType{kind: 'S', size: 3}, shape: []int64{4}, dimNames: []string{dim}, attrs: va},
		}
		l, err := layoutNetCDF(ga, vars)
		if err != nil {
			t.Fatal(err)
		}
		checkHeader(t, l)
		f := &netcdfFile{node: nil, layout: l}
		got := make([]byte, len(l.header))
		if n, err := f.ReadAt(context.Background(), got, 0); n != len(got) || err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("read %d of %d header bytes: %v", n, len(got), err)
		}
		if !bytes.Equal(got, l.header) {
			t.Fatal("read the header back differently")
		}
	})
}

// TestUTF32ToUTF8: NumPy's <U elements become UTF-8 in the same bytes,
// NUL-padded, as xarray's _Encoding = "utf-8" character arrays hold them.
func TestUTF32ToUTF8(t *testing.T) {
	enc := func(s string, n int) []byte {
		b := make([]byte, 4*n)
		for i, r := range []rune(s) {
			binary.LittleEndian.PutUint32(b[4*i:], uint32(r))
		}
		return b
	}
	for _, s := range []string{"", "a", "Zürich", "東京", "🌍x", "abcdef"} {
		b := enc(s, 6)
		utf32ToUTF8(b, 24)
		want := append([]byte(s), make([]byte, 24-len(s))...)
		if !bytes.Equal(b, want) {
			t.Errorf("%q: %q, want %q", s, b, want)
		}
	}
	b := enc("a", 2)
	binary.LittleEndian.PutUint32(b[4:], 0xd800) // a surrogate: not a code point
	utf32ToUTF8(b, 8)
	if want := "a\uFFFD\x00\x00\x00\x00"; string(b) != want {
		t.Errorf("invalid code point: %q, want %q", b, want)
	}
}
