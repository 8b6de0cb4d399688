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
	rendered
}

// newTextFile returns the data.txt of the array node n.
func newTextFile(n *zarr.Node) *textFile {
	f := &textFile{node: n}
	f.build = f.lines
	return f
}

func (f *textFile) Name() string { return "data.txt" }

// lines renders the file's content.
func (f *textFile) lines(ctx context.Context) ([]byte, error) {
	if f.node.Err != nil {
		return nil, f.node.Err
	}
	var b bytes.Buffer
	if err := WriteText(ctx, &b, f.node.Array); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// Xattrs are the array's.
func (f *textFile) Xattrs() []Xattr { return ArrayXattrs(f.node.Array.Meta()) }

// rendered is the content of a file made whole at its first use (data.hdr,
// data.txt, info.txt) and kept: it gives the file that embeds it Size, Check and
// ReadAt. A failed build is tried again at the next call.
type rendered struct {
	build func(context.Context) ([]byte, error)

	mu   sync.Mutex
	text []byte // nil until built
}

// render returns the content, building it at the first call.
func (r *rendered) render(ctx context.Context) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.text != nil {
		return r.text, nil
	}
	text, err := r.build(ctx)
	if err != nil {
		return nil, err
	}
	if text == nil {
		text = []byte{} // not nil, even when empty
	}
	r.text = text
	return text, nil
}

// Size is the length of the content.
func (r *rendered) Size(ctx context.Context) (int64, error) {
	text, err := r.render(ctx)
	return int64(len(text)), err
}

// Check builds the content: it fails when that fails.
func (r *rendered) Check(ctx context.Context) error {
	_, err := r.render(ctx)
	return err
}

// ReadAt copies from the content.
func (r *rendered) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	text, err := r.render(ctx)
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
	object := a.DataType().Name == zarr.ObjectType
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
