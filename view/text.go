package view

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"unicode/utf8"

	"github.com/zarrfs/zarrfs/zarr"
)

// textFile is the data.txt of an array of variable-length elements. Its
// content is rendered once, when it is first needed; a failed rendering is
// tried again at the next call.
type textFile struct {
	node *zarr.Node

	mu   sync.Mutex
	text []byte // nil until rendered
}

func (f *textFile) Name() string { return "data.txt" }

// render returns the file's content, rendering it on first use.
func (f *textFile) render(ctx context.Context) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.text != nil {
		return f.text, nil
	}
	if f.node.Err != nil {
		return nil, f.node.Err
	}
	var b bytes.Buffer
	if err := WriteText(ctx, &b, f.node.Array); err != nil {
		return nil, err
	}
	f.text = append([]byte{}, b.Bytes()...) // not nil, even when empty
	return f.text, nil
}

// Size is the length of the rendered text.
func (f *textFile) Size(ctx context.Context) (int64, error) {
	text, err := f.render(ctx)
	return int64(len(text)), err
}

// Check renders the text: it fails when the elements cannot be read.
func (f *textFile) Check(ctx context.Context) error {
	_, err := f.render(ctx)
	return err
}

// Xattrs are the array's.
func (f *textFile) Xattrs() []Xattr { return ArrayXattrs(f.node.Array, f.node.Format) }

// ReadAt copies from the rendered text.
func (f *textFile) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	text, err := f.render(ctx)
	if err != nil {
		return 0, err
	}
	return readBytes(text, p, off)
}

// textFlushSize is how much WriteText buffers before writing.
const textFlushSize = 64 << 10

// WriteText writes what data.txt shows for the variable-length array a to
// w: every element in C order, one per line, escaped as appendLine does.
// In an object array (zarr.ObjectType: json2, msgpack2) a string is shown
// so too, and any other element as its JSON text (objectLine).
func WriteText(ctx context.Context, w io.Writer, a *zarr.Array) error {
	buf := make([]byte, 0, textFlushSize)
	object := a.DataType.Name == zarr.ObjectType
	err := a.Elements(ctx, func(elem []byte) error {
		if object {
			buf = objectLine(buf, elem)
		} else {
			buf = appendLine(buf, elem)
		}
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

// objectLine appends an element of an object array, its JSON text, to dst
// as a line of data.txt: a string as appendLine writes it, anything else
// (a number, null, a list, an object) as the JSON itself, which has no
// newline.
func objectLine(dst, elem []byte) []byte {
	var s string
	if len(elem) > 0 && elem[0] == '"' && json.Unmarshal(elem, &s) == nil {
		return appendLine(dst, []byte(s))
	}
	return append(append(dst, elem...), '\n')
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
