package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"unicode/utf8"
)

func init() {
	Register(func(cfg Config) (Codec, error) { return newJSON2(cfg, "json2") }, "json2", "numcodecs.json2")
	Register(func(cfg Config) (Codec, error) { return newJSON2(cfg, "json") }, "json")
}

// JSON2 is numcodecs' JSON codec for object arrays, as an array→bytes codec
// for arrays of strings (the package's vlen layout). "json2" stores the
// chunk as a JSON list: its elements as nested lists, then the NumPy type
// string "|O", then the shape; the older "json" stores a flat list and the
// type string only. Arrays whose elements are not all strings (numbers,
// null, lists, objects) are unsupported. Encoding writes what Python's json
// module writes with numcodecs' defaults (ASCII only unless ensure_ascii is
// false, compact separators unless others are configured); an indented
// encoding is unsupported.
type JSON2 struct {
	ID          string // "json2" or "json"
	ASCII       bool   // ensure_ascii
	Indent      bool   // indent is set: decoding only
	Item, Colon string // separators
}

func newJSON2(cfg Config, id string) (Codec, error) {
	c := JSON2{ID: id, ASCII: true, Item: ",", Colon: ":"}
	var encoding string
	if _, err := cfg.Decode(id, "encoding", &encoding); err != nil {
		return nil, err
	}
	if encoding != "" && encoding != "utf-8" && encoding != "utf8" {
		return nil, Unsupportedf("%s encoding %q", id, encoding)
	}
	if _, err := cfg.Decode(id, "ensure_ascii", &c.ASCII); err != nil {
		return nil, err
	}
	if raw, ok := cfg["indent"]; ok && string(raw) != "null" && string(raw) != "false" {
		c.Indent = true
	}
	var seps []string
	if _, err := cfg.Decode(id, "separators", &seps); err != nil {
		return nil, err
	}
	if len(seps) == 2 {
		c.Item, c.Colon = seps[0], seps[1]
	} else if seps != nil {
		return nil, fmt.Errorf("%s: separators %q are not a pair", id, seps)
	}
	return c, nil
}

// Name implements Codec.
func (c JSON2) Name() string { return c.ID }

// EncodedSize implements ArrayToBytes.
func (JSON2) EncodedSize(ArraySpec) int { return -1 }

// Decode implements ArrayToBytes.
func (c JSON2) Decode(data []byte, decoded ArraySpec) ([]byte, error) {
	if !decoded.DataType.Variable() {
		return nil, Unsupportedf("%s codec for fixed-size data type %s", c.ID, decoded.DataType.Name)
	}
	var items []json.RawMessage
	// Python's json writes NaN, Infinity and -Infinity bare: they become
	// marked strings here, and bare again in the elements (pyNumbers).
	data, marked := markPyNumbers(data)
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, Corruptf(c.ID, "%w", err)
	}
	tail := 2
	if c.ID == "json" {
		tail = 1
	}
	if len(items) < tail {
		return nil, Corruptf(c.ID, "a list of %d items has no type and shape", len(items))
	}
	var dtype string
	if err := json.Unmarshal(items[len(items)-tail], &dtype); err != nil {
		return nil, Corruptf(c.ID, "type: %w", err)
	}
	if dtype != "|O" {
		return nil, Unsupportedf("%s data of type %q", c.ID, dtype)
	}
	n := decoded.NumElements()
	var shape []int
	if c.ID == "json" {
		// numcodecs' "json" writes the chunk's tolist() with no shape:
		// nested lists for a chunk of several dimensions, whose lengths
		// the first item of each level gives (its elements, strings or
		// numbers, never begin with '[').
		var err error
		if shape, err = nestedShape(items[:len(items)-tail], n); err != nil {
			return nil, Corruptf(c.ID, "%w", err)
		}
	} else {
		shape = nil
		if err := json.Unmarshal(items[len(items)-1], &shape); err != nil {
			return nil, Corruptf(c.ID, "shape: %w", err)
		}
		if len(shape) == 0 {
			return nil, Corruptf(c.ID, "no shape")
		}
		count := 1
		for _, d := range shape {
			if d < 0 || (d > 0 && count > n/d) {
				return nil, Corruptf(c.ID, "shape %v, want %d elements", shape, n)
			}
			count *= d
		}
		if count != n {
			return nil, Corruptf(c.ID, "shape %v, want %d elements", shape, n)
		}
	}
	object := decoded.DataType.Name == ObjectType
	elems := make([]string, 0, n)
	var walk func(list []json.RawMessage, depth int) error
	walk = func(list []json.RawMessage, depth int) error {
		if len(list) != shape[depth] {
			return Corruptf(c.ID, "%d items in dimension %d of shape %v", len(list), depth, shape)
		}
		for _, raw := range list {
			if depth < len(shape)-1 {
				var sub []json.RawMessage
				if err := json.Unmarshal(raw, &sub); err != nil {
					return Corruptf(c.ID, "dimension %d: %w", depth+1, err)
				}
				if err := walk(sub, depth+1); err != nil {
					return err
				}
				continue
			}
			if object {
				b, err := objectJSON(raw)
				if err != nil {
					return Corruptf(c.ID, "%w", err)
				}
				if marked {
					b = unmarkPyNumbers(b)
				}
				elems = append(elems, string(b))
				continue
			}
			var s string
			if len(raw) == 0 || raw[0] != '"' || marked && bytes.HasPrefix(raw, []byte(`"`+pyMark)) {
				return Unsupportedf("%s element %.20s that is not a string in an array of %s", c.ID, raw, decoded.DataType.Name)
			}
			if err := json.Unmarshal(raw, &s); err != nil {
				return Corruptf(c.ID, "%w", err)
			}
			elems = append(elems, s)
		}
		return nil
	}
	if err := walk(items[:len(items)-tail], 0); err != nil {
		return nil, err
	}
	return vlenAppend(nil, elems), nil
}

// nestedShape returns the lengths of the nested lists list begins, level
// by level down its first items, which must hold n elements in all.
func nestedShape(list []json.RawMessage, n int) ([]int, error) {
	shape := []int{len(list)}
	count := len(list)
	for len(list) > 0 && len(list[0]) > 0 && list[0][0] == '[' && len(shape) < 32 {
		var sub []json.RawMessage
		if err := json.Unmarshal(list[0], &sub); err != nil {
			return nil, fmt.Errorf("dimension %d: %w", len(shape), err)
		}
		if len(sub) == 0 { // a dimension of length 0: no elements below
			shape = append(shape, 0)
			count = 0
			break
		}
		if count > n/len(sub) {
			return nil, fmt.Errorf("nested lists of %v, want %d elements", append(shape, len(sub)), n)
		}
		shape = append(shape, len(sub))
		count *= len(sub)
		list = sub
	}
	if count != n {
		return nil, fmt.Errorf("nested lists of %v, want %d elements", shape, n)
	}
	return shape, nil
}

// Encode implements ArrayToBytes.
func (c JSON2) Encode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	if decoded.DataType.Name == ObjectType {
		return nil, Unsupportedf("%s encoding of object arrays", c.ID)
	}
	if !decoded.DataType.Variable() {
		return nil, Unsupportedf("%s codec for fixed-size data type %s", c.ID, decoded.DataType.Name)
	}
	if c.Indent {
		return nil, Unsupportedf("%s encoding with indent", c.ID)
	}
	elems, err := splitVlen(c.ID, chunk, decoded.NumElements())
	if err != nil {
		return nil, err
	}
	shape := decoded.Shape
	if c.ID == "json" || len(shape) == 0 {
		shape = []int{len(elems)}
	}
	var buf bytes.Buffer
	next := 0
	var write func(depth int) error
	write = func(depth int) error {
		for i := 0; i < shape[depth]; i++ {
			if i > 0 {
				buf.WriteString(c.Item)
			}
			if depth < len(shape)-1 {
				buf.WriteByte('[')
				if err := write(depth + 1); err != nil {
					return err
				}
				buf.WriteByte(']')
				continue
			}
			if err := pyJSONString(&buf, elems[next], c.ASCII); err != nil {
				return fmt.Errorf("%s: element %d: %w", c.ID, next, err)
			}
			next++
		}
		return nil
	}
	buf.WriteByte('[')
	if err := write(0); err != nil {
		return nil, err
	}
	if len(elems) > 0 {
		buf.WriteString(c.Item)
	}
	buf.WriteString(`"|O"`)
	if c.ID == "json2" {
		buf.WriteString(c.Item + "[")
		for i, d := range shape {
			if i > 0 {
				buf.WriteString(c.Item)
			}
			buf.WriteString(strconv.Itoa(d))
		}
		buf.WriteByte(']')
	}
	buf.WriteByte(']')
	return buf.Bytes(), nil
}

// pyJSONString writes s as Python's json module does, escaping everything
// outside printable ASCII when ascii is set.
func pyJSONString(buf *bytes.Buffer, s []byte, ascii bool) error {
	if !utf8.Valid(s) {
		return fmt.Errorf("not valid UTF-8")
	}
	const hex = "0123456789abcdef"
	u := func(r rune) {
		buf.WriteString(`\u`)
		buf.WriteByte(hex[r>>12&15])
		buf.WriteByte(hex[r>>8&15])
		buf.WriteByte(hex[r>>4&15])
		buf.WriteByte(hex[r&15])
	}
	buf.WriteByte('"')
	for _, r := range string(s) {
		switch {
		case r == '"':
			buf.WriteString(`\"`)
		case r == '\\':
			buf.WriteString(`\\`)
		case r == '\n':
			buf.WriteString(`\n`)
		case r == '\r':
			buf.WriteString(`\r`)
		case r == '\t':
			buf.WriteString(`\t`)
		case r == '\b':
			buf.WriteString(`\b`)
		case r == '\f':
			buf.WriteString(`\f`)
		case r < 0x20:
			u(r)
		case !ascii || r < 0x7f:
			buf.WriteRune(r)
		case r > 0xffff:
			r -= 0x10000
			u(0xd800 | r>>10&0x3ff)
			u(0xdc00 | r&0x3ff)
		default:
			u(r)
		}
	}
	buf.WriteByte('"')
	return nil
}

// pyMark begins the strings markPyNumbers turns Python's bare numbers
// into: a NUL, which no JSON text holds unescaped inside a string as
// json.Compact writes it back (it stays the escape \u0000).
const pyMark = "\\u0000py:"

// markPyNumbers returns data with each bare NaN, Infinity and -Infinity
// outside strings turned into the string "\u0000py:NaN" (…), and whether
// it turned any.
func markPyNumbers(data []byte) ([]byte, bool) {
	if !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
		return data, false
	}
	var out []byte
	marked := false
	for i := 0; i < len(data); i++ {
		c := data[i]
		if c == '"' {
			j := i + 1
			for ; j < len(data) && data[j] != '"'; j++ {
				if data[j] == '\\' {
					j++
				}
			}
			end := min(j+1, len(data))
			out = append(out, data[i:end]...)
			i = end - 1
			continue
		}
		for _, tok := range []string{"NaN", "Infinity", "-Infinity"} {
			if bytes.HasPrefix(data[i:], []byte(tok)) {
				out = append(out, '"')
				out = append(out, pyMark...)
				out = append(out, tok...)
				out = append(out, '"')
				i += len(tok) - 1
				marked = true
				c = 0
				break
			}
		}
		if c != 0 {
			out = append(out, c)
		}
	}
	return out, marked
}

// unmarkPyNumbers turns the marked strings of markPyNumbers in a compact
// JSON element back into bare NaN, Infinity and -Infinity.
func unmarkPyNumbers(b []byte) []byte {
	for _, tok := range []string{"NaN", "Infinity", "-Infinity"} {
		b = bytes.ReplaceAll(b, []byte(`"`+pyMark+tok+`"`), []byte(tok))
	}
	return b
}
