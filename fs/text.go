package fs

import "unicode/utf8"

// appendLine appends one element of a variable-length array to dst as a
// line of data.txt: a backslash is written `\\`, a newline `\n`, a carriage
// return `\r`, a byte that is not part of valid UTF-8 `\xNN`, and the line
// ends in a newline.
func appendLine(dst, elem []byte) []byte {
	for i := 0; i < len(elem); {
		c := elem[i]
		if c < utf8.RuneSelf {
			switch c {
			case '\\':
				dst = append(dst, `\\`...)
			case '\n':
				dst = append(dst, `\n`...)
			case '\r':
				dst = append(dst, `\r`...)
			default:
				dst = append(dst, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(elem[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, '\\', 'x', hexDigits[c>>4], hexDigits[c&15])
		} else {
			dst = append(dst, elem[i:i+size]...)
		}
		i += size
	}
	return append(dst, '\n')
}
