package view

import (
	"encoding/binary"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/zarr/meta"
)

// npyAlign is NumPy's ARRAY_ALIGN: the magic string, the header length and
// the header together are padded to a multiple of it, so the data that
// follows is aligned for memory mapping.
const npyAlign = 64

// npyGrowthDigits is NumPy's GROWTH_AXIS_MAX_DIGITS: NumPy leaves room for
// the first axis to grow to this many digits without rewriting the file.
const npyGrowthDigits = 21

// npyMaxV1Header is the largest header length field of format 1.0 (a
// little-endian uint16); longer headers need format 2.0 (uint32).
const npyMaxV1Header = 1<<16 - 1

// NpyHeader returns the NumPy .npy header that numpy.lib.format.write_array
// writes before the C-order contents of an array of NumPy type string descr
// ("<f4", "|S7") and the given shape, byte for byte: format 1.0, or 2.0 when
// the header does not fit a 16-bit length. A structured type's descr is
// the Python literal of its field list ("[('a', '<i4')]") and is written as
// it is; any other descr is written as a Python string.
func NpyHeader(descr string, shape []int64) []byte {
	var b strings.Builder
	b.WriteString("{'descr': ")
	if strings.HasPrefix(descr, "[") {
		b.WriteString(descr)
	} else {
		b.WriteString(pyStr(descr))
	}
	b.WriteString(", 'fortran_order': False, 'shape': ")
	b.WriteString(meta.PyTuple(shape))
	b.WriteString(", }")
	if len(shape) > 0 {
		b.WriteString(strings.Repeat(" ", max(0, npyGrowthDigits-len(strconv.FormatInt(shape[0], 10)))))
	}
	dict := b.String()
	if h := npyWrap(dict, 1); h != nil {
		return h
	}
	return npyWrap(dict, 2)
}

// npyWrap adds the magic string, the version, the header length and the
// padding to dict, as NumPy's _wrap_header does; it returns nil when the
// header is too long for a version 1 length field.
func npyWrap(dict string, major byte) []byte {
	lenSize := 2
	if major >= 2 {
		lenSize = 4
	}
	prefix := 6 + 2 + lenSize // "\x93NUMPY", major, minor, length
	hlen := len(dict) + 1     // with the final newline
	pad := npyAlign - (prefix+hlen)%npyAlign
	if major == 1 && hlen+pad > npyMaxV1Header {
		return nil
	}
	out := make([]byte, 0, prefix+hlen+pad)
	out = append(out, "\x93NUMPY"...)
	out = append(out, major, 0)
	if lenSize == 2 {
		out = binary.LittleEndian.AppendUint16(out, uint16(hlen+pad))
	} else {
		out = binary.LittleEndian.AppendUint32(out, uint32(hlen+pad))
	}
	out = append(out, dict...)
	out = append(out, strings.Repeat(" ", pad)...)
	return append(out, '\n')
}

// pyStr formats s as Python's repr of an ASCII str: single quotes unless s
// holds a single quote and no double quote, backslashes and quotes escaped.
// NumPy type strings are plain ASCII; other bytes are escaped as \xNN.
func pyStr(s string) string {
	quote := byte('\'')
	if strings.IndexByte(s, '\'') >= 0 && strings.IndexByte(s, '"') < 0 {
		quote = '"'
	}
	var b strings.Builder
	b.WriteByte(quote)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == quote || c == '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20 || c >= 0x7f:
			b.WriteString(`\x`)
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&15])
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte(quote)
	return b.String()
}

const hexDigits = "0123456789abcdef"
