package codec

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ObjectType is the data type of numcodecs' object arrays read through
// json2 or msgpack2 (the v2 dtype "|O" with those object codecs): a
// variable-length type whose elements, in the package's vlen layout, are
// each one compact JSON value (strings as JSON strings, numbers, null,
// lists, objects), as Python's json module writes them (bare NaN and
// Infinity included).
const ObjectType = "object"

// objectJSON returns a json2 element as an object array's element: its
// JSON text, compacted.
func objectJSON(raw json.RawMessage) ([]byte, error) {
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// mpOther parses a MessagePack value mpParse has no kind for (nil,
// booleans, floats, negative and signed integers, maps) whose type byte b
// has been read, as JSON text in an mpValue of kind 'j'.
func mpOther(b byte, p []byte, depth int) (mpValue, []byte, error) {
	fixed := func(size int) ([]byte, []byte, error) {
		if len(p) < size {
			return nil, nil, fmt.Errorf("truncated")
		}
		return p[:size], p[size:], nil
	}
	j := func(s string, rest []byte, err error) (mpValue, []byte, error) {
		return mpValue{kind: 'j', bytes: []byte(s)}, rest, err
	}
	switch {
	case b == 0xc0:
		return j("null", p, nil)
	case b == 0xc2:
		return j("false", p, nil)
	case b == 0xc3:
		return j("true", p, nil)
	case b >= 0xe0: // negative fixint
		return j(strconv.Itoa(int(int8(b))), p, nil)
	case b >= 0xd0 && b <= 0xd3:
		v, rest, err := fixed(1 << (b - 0xd0))
		if err != nil {
			return mpValue{}, nil, err
		}
		var n int64
		switch len(v) {
		case 1:
			n = int64(int8(v[0]))
		case 2:
			n = int64(int16(binary.BigEndian.Uint16(v)))
		case 4:
			n = int64(int32(binary.BigEndian.Uint32(v)))
		default:
			n = int64(binary.BigEndian.Uint64(v))
		}
		return j(strconv.FormatInt(n, 10), rest, nil)
	case b == 0xca:
		v, rest, err := fixed(4)
		if err != nil {
			return mpValue{}, nil, err
		}
		return j(pyFloat(float64(math.Float32frombits(binary.BigEndian.Uint32(v)))), rest, nil)
	case b == 0xcb:
		v, rest, err := fixed(8)
		if err != nil {
			return mpValue{}, nil, err
		}
		return j(pyFloat(math.Float64frombits(binary.BigEndian.Uint64(v))), rest, nil)
	case b >= 0x80 && b <= 0x8f || b == 0xde || b == 0xdf:
		n := uint64(b & 0x0f)
		if b >= 0xde {
			v, rest, err := fixed(2 << (b - 0xde))
			if err != nil {
				return mpValue{}, nil, err
			}
			n, p = 0, rest
			for _, c := range v {
				n = n<<8 | uint64(c)
			}
		}
		if n > uint64(len(p))/2 { // every key and value takes a byte at least
			return mpValue{}, nil, fmt.Errorf("map of %d entries, only %d bytes left", n, len(p))
		}
		var out bytes.Buffer
		out.WriteByte('{')
		for i := range n {
			k, rest, err := mpParse(p, depth+1)
			if err != nil {
				return mpValue{}, nil, err
			}
			if k.kind != 's' {
				return mpValue{}, nil, Unsupportedf("msgpack2 map key that is not a string")
			}
			v, rest, err := mpParse(rest, depth+1)
			if err != nil {
				return mpValue{}, nil, err
			}
			if i > 0 {
				out.WriteByte(',')
			}
			ks, err := mpJSON(k)
			if err != nil {
				return mpValue{}, nil, err
			}
			vs, err := mpJSON(v)
			if err != nil {
				return mpValue{}, nil, err
			}
			out.Write(ks)
			out.WriteByte(':')
			out.Write(vs)
			p = rest
		}
		out.WriteByte('}')
		return mpValue{kind: 'j', bytes: out.Bytes()}, p, nil
	}
	return mpValue{}, nil, Unsupportedf("msgpack2 value of type %#02x", b)
}

// mpJSON returns a parsed MessagePack value as an object array's element:
// compact JSON. Binary strings have no JSON form and are unsupported.
func mpJSON(v mpValue) ([]byte, error) {
	switch v.kind {
	case 's':
		// As Python's json.dumps with ensure_ascii off: no \u escapes
		// but for control characters (encoding/json would escape <, >, &).
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(string(v.bytes)); err != nil {
			return nil, err
		}
		return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
	case 'i':
		return strconv.AppendUint(nil, v.n, 10), nil
	case 'j':
		return v.bytes, nil
	case 'a':
		out := []byte{'['}
		for i, it := range v.items {
			if i > 0 {
				out = append(out, ',')
			}
			b, err := mpJSON(it)
			if err != nil {
				return nil, err
			}
			out = append(out, b...)
		}
		return append(out, ']'), nil
	case 'b':
		// JSON has no byte strings: a bytes element is shown as Python
		// shows it (repr), b'ab\x00', as zarr-python's users see it.
		return pyBytesRepr(v.bytes), nil
	}
	return nil, Unsupportedf("msgpack2 element of kind %q in an object array", v.kind)
}

// pyBytesRepr returns Python's repr of the byte string b: b'…' (b"…" when
// b holds a single quote and no double quote), with \\, \t, \n, \r, the
// quote, and bytes outside printable ASCII as \xNN.
func pyBytesRepr(b []byte) []byte {
	quote := byte('\'')
	if bytes.IndexByte(b, '\'') >= 0 && bytes.IndexByte(b, '"') < 0 {
		quote = '"'
	}
	out := append(make([]byte, 0, len(b)+3), 'b', quote)
	const hexDigits = "0123456789abcdef"
	for _, c := range b {
		switch {
		case c == '\\' || c == quote:
			out = append(out, '\\', c)
		case c == '\t':
			out = append(out, '\\', 't')
		case c == '\n':
			out = append(out, '\\', 'n')
		case c == '\r':
			out = append(out, '\\', 'r')
		case c < 0x20 || c >= 0x7f:
			out = append(out, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
		default:
			out = append(out, c)
		}
	}
	return append(out, quote)
}

// NonFiniteName returns how JSON metadata and Python's json module spell a
// float JSON has no number for: "NaN", "Infinity" or "-Infinity"; "" for a
// finite f.
func NonFiniteName(f float64) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return ""
}

// pyFloat formats f as Python's repr (and json module) does: positional
// notation with at least one decimal for exponents from -4 to 15, else
// scientific with a two-digit exponent at least; NaN and ±Infinity bare.
func pyFloat(f float64) string {
	if s := NonFiniteName(f); s != "" {
		return s
	}
	if f == 0 || math.Abs(f) >= 1e-4 && math.Abs(f) < 1e16 {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	return strconv.FormatFloat(f, 'e', -1, 64)
}
