package meta

import (
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zarrfs/zarrfs/internal/pyjson"
)

// parseFillValue turns a fill_value of format v2 or v3 into one element of
// t's logical content (little-endian). For variable-length types it is the
// element's bytes. A JSON null (and a missing fill value) is all zeros (the
// empty element for variable-length types).
func parseFillValue(t dtype, raw json.RawMessage, format Format) ([]byte, error) {
	out, err := fillValue(t, raw, format)
	if err != nil {
		return nil, fmt.Errorf("%w: fill_value %s for data type %s: %v", ErrInvalidMetadata, compact(raw), t.spelling, err)
	}
	return out, nil
}

func fillValue(t dtype, raw json.RawMessage, format Format) ([]byte, error) {
	raw = bytes.TrimSpace(raw)
	if t.kind == 'o' {
		// An object array's missing elements are the fill value itself
		// (zarr-python 2 fills them with the Python object): its JSON.
		if len(raw) == 0 {
			return []byte("null"), nil
		}
		var b bytes.Buffer
		if err := json.Compact(&b, raw); err != nil {
			return nil, err
		}
		return b.Bytes(), nil
	}
	if len(raw) == 0 || string(raw) == "null" {
		return make([]byte, t.Size), nil
	}
	if t.fields != nil {
		return structFill(t, raw, format)
	}
	if t.kind == mlKind {
		return mlFill(t.Name, raw)
	}
	out := make([]byte, t.Size)
	switch t.kind {
	case 'b':
		switch string(raw) {
		case "true", "1":
			out[0] = 1
		case "false", "0":
		default:
			return nil, fmt.Errorf("not a boolean")
		}
		return out, nil
	case 'i', 'u':
		if format == FormatV2 && raw[0] == '"' {
			// GDAL writes 64-bit integer fill values as decimal strings
			// ("18446744073709551614"), which zarr-python (NumPy) reads.
			var s string
			if json.Unmarshal(raw, &s) == nil && decimalInteger(s) {
				raw = json.RawMessage(s)
			}
		}
		return out, putInt(out, t.kind == 'u', raw)
	case 'M', 'm':
		if string(raw) == `"NaT"` {
			binary.LittleEndian.PutUint64(out, 1<<63)
			return out, nil
		}
		return out, putInt(out, false, raw)
	case 'f':
		return out, putFloat(out, raw)
	case 'c':
		var parts []json.RawMessage
		if err := json.Unmarshal(raw, &parts); err != nil || len(parts) != 2 {
			return nil, fmt.Errorf("a complex fill value is [real, imaginary]")
		}
		h := t.Size / 2
		if err := putFloat(out[:h], parts[0]); err != nil {
			return nil, fmt.Errorf("real part: %w", err)
		}
		if err := putFloat(out[h:], parts[1]); err != nil {
			return nil, fmt.Errorf("imaginary part: %w", err)
		}
		return out, nil
	case 'S', 'V':
		b, err := byteFill(raw, format)
		if err != nil {
			return nil, err
		}
		if len(b) > t.Size && (t.kind == 'V' || format == FormatV3) {
			return nil, fmt.Errorf("%d bytes do not fit an element of %d", len(b), t.Size)
		}
		copy(out, b)
		return out, nil
	case 'U':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			// zarr-python 2.1 wrote 0 for <U arrays (its fixture/15);
			// zarr-python and zarrita read a number as its decimal
			// text, as np.array(0, dtype="<U4") does: "0".
			var n json.Number
			if format != FormatV2 || json.Unmarshal(raw, &n) != nil {
				return nil, fmt.Errorf("a string fill value must be a JSON string")
			}
			s = n.String()
		}
		if n := utf8.RuneCountInString(s); n*4 > t.Size {
			return nil, fmt.Errorf("%d code points do not fit an element of %d", n, t.Size/4)
		}
		i := 0
		for _, r := range s {
			binary.LittleEndian.PutUint32(out[i:], uint32(r))
			i += 4
		}
		return out, nil
	case 's', 'y':
		if format == FormatV2 && (raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
			// zarr-python 2 writes 0 for object arrays: the empty element.
			return nil, nil
		}
		if t.kind == 'y' {
			return byteFill(raw, format)
		}
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, fmt.Errorf("a string fill value must be a JSON string")
		}
		return []byte(s), nil
	}
	return nil, fmt.Errorf("no fill values for this data type")
}

// byteFill decodes a byte-string fill value: base64 text, or (v3) a list
// of byte values. v2 is lenient as zarr-python is: a number is its decimal text.
func byteFill(raw json.RawMessage, format Format) ([]byte, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err == nil {
		b, err := base64.StdEncoding.DecodeString(s)
		if err != nil {
			if format == FormatV2 {
				return []byte(s), nil
			}
			return nil, fmt.Errorf("not base64: %v", err)
		}
		return b, nil
	}
	var list []json.Number
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&list); err == nil {
		b := make([]byte, len(list))
		for i, n := range list {
			v, err := strconv.ParseUint(n.String(), 10, 8)
			if err != nil {
				return nil, fmt.Errorf("byte %d: %s is not in [0, 255]", i, n)
			}
			b[i] = byte(v)
		}
		return b, nil
	}
	if format == FormatV2 {
		var n json.Number
		if json.Unmarshal(raw, &n) == nil {
			return []byte(n.String()), nil
		}
	}
	return nil, fmt.Errorf("a byte-string fill value must be base64 text or a list of bytes")
}

// decimalInteger reports whether s is an integer in decimal digits, with
// an optional minus sign.
func decimalInteger(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// putInt writes the integer JSON number raw into out (little-endian, signed
// or unsigned by unsigned), checking its range exactly.
func putInt(out []byte, unsigned bool, raw json.RawMessage) error {
	if u, ok := plainInt(raw, unsigned, len(out)*8); ok {
		for i := range out {
			out[i] = byte(u >> (8 * i))
		}
		return nil
	}
	return putIntSlowly(out, unsigned, raw)
}

// putIntSlowly is putInt for what plainInt leaves to it, with math/big:
// it says why it refuses raw.
func putIntSlowly(out []byte, unsigned bool, raw json.RawMessage) error {
	var n json.Number
	if len(raw) == 0 || raw[0] == '"' || json.Unmarshal(raw, &n) != nil {
		return fmt.Errorf("not a number")
	}
	bits := uint(len(out) * 8)
	s := n.String()
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		// An integral value written as a float ("1.0", "1e3").
		f, _, err := big.ParseFloat(s, 10, 256, big.ToNearestEven)
		if err != nil || !f.IsInt() {
			return fmt.Errorf("%s is not an integer", s)
		}
		v, _ = f.Int(nil)
	}
	var lo, hi *big.Int
	if unsigned {
		lo, hi = big.NewInt(0), new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), bits), big.NewInt(1))
	} else {
		hi = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), bits-1), big.NewInt(1))
		lo = new(big.Int).Neg(new(big.Int).Lsh(big.NewInt(1), bits-1))
	}
	if v.Cmp(lo) < 0 || v.Cmp(hi) > 0 {
		return fmt.Errorf("%s is out of range [%s, %s]", s, lo, hi)
	}
	var u uint64
	if v.Sign() < 0 {
		u = uint64(v.Int64())
	} else {
		u = v.Uint64()
	}
	for i := range out {
		out[i] = byte(u >> (8 * i))
	}
	return nil
}

// plainInt returns the integer raw stands for, as the bits of a bits-bit
// integer, when raw is a plain JSON integer ("-12") in the type's range:
// ok is false for anything else, which putInt reads the general way.
func plainInt(raw []byte, unsigned bool, bits int) (uint64, bool) {
	if !jsonInteger(raw) {
		return 0, false
	}
	if unsigned {
		u, err := strconv.ParseUint(string(raw), 10, bits)
		return u, err == nil
	}
	n, err := strconv.ParseInt(string(raw), 10, bits)
	return uint64(n), err == nil
}

// jsonInteger reports whether raw is a JSON number with no fraction or
// exponent.
func jsonInteger(raw []byte) bool {
	i := 0
	if len(raw) > 0 && raw[0] == '-' {
		i++
	}
	j := pyjson.Digits(raw, i)
	return j == len(raw) && j > i && (raw[i] != '0' || j == i+1)
}

// floatValue reads a float fill value as encoding/json would: the string
// it is, or else the number (the error "not a number" when it is
// neither). Plain strings and numbers are read without encoding/json.
func floatValue(raw json.RawMessage) (s string, n json.Number, isString bool, err error) {
	s, isString = plainString(raw)
	if !isString && !pyjson.IsNumber(raw) {
		isString = json.Unmarshal(raw, &s) == nil
	}
	if isString {
		return s, "", true, nil
	}
	n = json.Number(raw) // a plain JSON number, as encoding/json reads it
	if !pyjson.IsNumber(raw) {
		if err := json.Unmarshal(raw, &n); err != nil {
			return "", "", false, fmt.Errorf("not a number")
		}
	}
	return "", n, false, nil
}

// putFloat writes a float fill value (a number, "NaN", "Infinity",
// "-Infinity" or a "0x…" bit pattern) into out (2, 4 or 8 bytes).
func putFloat(out []byte, raw json.RawMessage) error {
	var f float64
	s, n, isString, err := floatValue(raw)
	if err != nil {
		return err
	}
	if isString {
		switch {
		case s == "NaN":
			// The canonical quiet NaN, as NumPy's np.nan (Go's math.NaN
			// has a different payload).
			switch len(out) {
			case 2:
				binary.LittleEndian.PutUint16(out, 0x7e00)
			case 4:
				binary.LittleEndian.PutUint32(out, 0x7fc00000)
			case 8:
				binary.LittleEndian.PutUint64(out, 0x7ff8000000000000)
			default:
				return fmt.Errorf("no %d-byte floats", len(out))
			}
			return nil
		case s == "Infinity":
			f = math.Inf(1)
		case s == "-Infinity":
			f = math.Inf(-1)
		case strings.HasPrefix(s, "0x"):
			if len(s) != 2+2*len(out) {
				return fmt.Errorf("hex fill value %q needs %d digits", s, 2*len(out))
			}
			u, err := strconv.ParseUint(s[2:], 16, 64)
			if err != nil {
				return fmt.Errorf("hex fill value %q: %v", s, err)
			}
			for i := range out {
				out[i] = byte(u >> (8 * i))
			}
			return nil
		default:
			return fmt.Errorf("%q is not a number, NaN, Infinity, -Infinity or 0x… bits", s)
		}
	} else {
		bitSize := 64
		if len(out) == 4 {
			bitSize = 32
		}
		if f, err = strconv.ParseFloat(n.String(), bitSize); err != nil {
			return fmt.Errorf("%s: %v", n, err)
		}
	}
	switch len(out) {
	case 2:
		binary.LittleEndian.PutUint16(out, halfFromFloat64(f))
	case 4:
		binary.LittleEndian.PutUint32(out, math.Float32bits(float32(f)))
	case 8:
		binary.LittleEndian.PutUint64(out, math.Float64bits(f))
	default:
		return fmt.Errorf("no %d-byte floats", len(out))
	}
	return nil
}

// halfFromFloat64 converts f to IEEE 754 binary16, rounding to nearest even.
func halfFromFloat64(f float64) uint16 {
	sign := uint16(math.Float64bits(f)>>48) & 0x8000
	a := math.Abs(f)
	switch {
	case math.IsNaN(f):
		return sign | 0x7e00
	case a >= 65520: // the halfway point above the largest half, 65504
		return sign | 0x7c00
	case a < 0x1p-14: // subnormal (or zero): units of 2^-24
		return sign | uint16(math.RoundToEven(a*0x1p24))
	}
	frac, exp := math.Frexp(a) // a = frac × 2^exp, frac in [0.5, 1)
	e := exp - 1
	m := math.RoundToEven((frac*2 - 1) * 1024)
	if m == 1024 {
		m = 0
		e++
	}
	if e+15 >= 31 {
		return sign | 0x7c00
	}
	return sign | uint16(e+15)<<10 | uint16(m)
}
