package fs

import (
	"context"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/zarrfs/zarrfs/zarr"
)

// textFlushSize is how much WriteText buffers before writing.
const textFlushSize = 64 << 10

// WriteText writes what data.txt shows for the variable-length array a to
// w: every element in C order, one per line, escaped as appendLine does.
func WriteText(ctx context.Context, w io.Writer, a *zarr.Array) error {
	buf := make([]byte, 0, textFlushSize)
	err := a.Elements(ctx, func(elem []byte) error {
		buf = appendLine(buf, elem)
		if len(buf) < textFlushSize {
			return nil
		}
		_, err := w.Write(buf)
		buf = buf[:0]
		return err
	})
	if err != nil {
		return err
	}
	if _, err := w.Write(buf); err != nil {
		return fmt.Errorf("write text: %w", err)
	}
	return nil
}

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
