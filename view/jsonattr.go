package view

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// A jsonValue is one value of a node's attributes as its writer meant it:
// objects keep their members' order, numbers their spelling (an integer
// stays an integer), and the bare NaN, Infinity and -Infinity that Python's
// json module writes (zarr-python 2, xarray) are numbers, as zarr-python
// reads them. The engine's Node.Attributes turns those into strings, so
// the NetCDF view reads the attribute documents itself.
type jsonValue struct {
	kind    jsonKind
	str     string // a string's value; a number's spelling
	boolean bool
	items   []jsonValue  // an array's items
	members []jsonMember // an object's members, in order
}

type jsonMember struct {
	name  string
	value jsonValue
}

type jsonKind int

const (
	jsonNull jsonKind = iota
	jsonBool
	jsonNumber
	jsonString
	jsonArray
	jsonObject
)

// maxJSONDepth bounds the nesting of attribute values, so a hostile
// document cannot exhaust the stack.
const maxJSONDepth = 1000

// parseJSON parses one JSON value, which may use Python's bare non-finite
// numbers; nothing but white space may follow it.
func parseJSON(doc []byte) (jsonValue, error) {
	p := jsonParser{doc: doc}
	v, err := p.value(0)
	if err != nil {
		return jsonValue{}, err
	}
	if p.skip(); p.i != len(doc) {
		return jsonValue{}, errors.New("data after the JSON value")
	}
	return v, nil
}

type jsonParser struct {
	doc []byte
	i   int
}

var errJSON = errors.New("not JSON")

func (p *jsonParser) skip() {
	for p.i < len(p.doc) {
		switch p.doc[p.i] {
		case ' ', '\t', '\r', '\n':
			p.i++
		default:
			return
		}
	}
}

func (p *jsonParser) literal(s string) bool {
	if bytes.HasPrefix(p.doc[p.i:], []byte(s)) {
		p.i += len(s)
		return true
	}
	return false
}

// eat skips white space and then the byte c, reporting whether c was there.
func (p *jsonParser) eat(c byte) bool {
	p.skip()
	if p.i < len(p.doc) && p.doc[p.i] == c {
		p.i++
		return true
	}
	return false
}

// list reads the members of an object or the items of an array, its
// opening byte read, up to its closing byte end: elem reads one, and a
// comma stands between them.
func (p *jsonParser) list(end byte, elem func() error) error {
	if p.eat(end) {
		return nil
	}
	for {
		if err := elem(); err != nil {
			return err
		}
		if p.eat(',') {
			continue
		}
		if p.eat(end) {
			return nil
		}
		return errJSON
	}
}

func (p *jsonParser) value(depth int) (jsonValue, error) {
	if depth > maxJSONDepth {
		return jsonValue{}, errors.New("JSON nested too deep")
	}
	p.skip()
	if p.i >= len(p.doc) {
		return jsonValue{}, errJSON
	}
	switch c := p.doc[p.i]; {
	case c == '{':
		p.i++
		v := jsonValue{kind: jsonObject}
		err := p.list('}', func() error {
			p.skip()
			name, err := p.string()
			if err != nil {
				return err
			}
			if !p.eat(':') {
				return errJSON
			}
			item, err := p.value(depth + 1)
			if err != nil {
				return err
			}
			v.members = append(v.members, jsonMember{name, item})
			return nil
		})
		if err != nil {
			return jsonValue{}, err
		}
		return v, nil
	case c == '[':
		p.i++
		v := jsonValue{kind: jsonArray}
		err := p.list(']', func() error {
			item, err := p.value(depth + 1)
			if err != nil {
				return err
			}
			v.items = append(v.items, item)
			return nil
		})
		if err != nil {
			return jsonValue{}, err
		}
		return v, nil
	case c == '"':
		s, err := p.string()
		return jsonValue{kind: jsonString, str: s}, err
	case p.literal("true"):
		return jsonValue{kind: jsonBool, boolean: true}, nil
	case p.literal("false"):
		return jsonValue{kind: jsonBool}, nil
	case p.literal("null"):
		return jsonValue{kind: jsonNull}, nil
	case p.literal("NaN"):
		return jsonValue{kind: jsonNumber, str: "NaN"}, nil
	case p.literal("Infinity"):
		return jsonValue{kind: jsonNumber, str: "Infinity"}, nil
	case p.literal("-Infinity"):
		return jsonValue{kind: jsonNumber, str: "-Infinity"}, nil
	default:
		start := p.i
		for p.i < len(p.doc) && bytes.IndexByte([]byte("+-0123456789.eE"), p.doc[p.i]) >= 0 {
			p.i++
		}
		num := p.doc[start:p.i]
		if len(num) == 0 || !json.Valid(num) {
			return jsonValue{}, errJSON
		}
		return jsonValue{kind: jsonNumber, str: string(num)}, nil
	}
}

// string parses a JSON string at p.i, as encoding/json decodes it.
func (p *jsonParser) string() (string, error) {
	if p.i >= len(p.doc) || p.doc[p.i] != '"' {
		return "", errJSON
	}
	end := p.i + 1
	for ; end < len(p.doc) && p.doc[end] != '"'; end++ {
		if p.doc[end] == '\\' {
			end++
		}
	}
	if end >= len(p.doc) {
		return "", errJSON
	}
	var s string
	if err := json.Unmarshal(p.doc[p.i:end+1], &s); err != nil {
		return "", errJSON
	}
	p.i = end + 1
	return s, nil
}

// float returns a number's value (NaN and the infinities included).
func (v jsonValue) float() float64 {
	switch v.str {
	case "NaN":
		return math.NaN()
	case "Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	}
	f, _ := strconv.ParseFloat(v.str, 64) // ±Inf for numbers out of range
	return f
}

// integer returns a number written as an integer (no fraction, no
// exponent) that fits an int64.
func (v jsonValue) integer() (int64, bool) {
	i, err := strconv.ParseInt(v.str, 10, 64)
	return i, err == nil
}

// compact writes v as compact JSON (non-finite numbers bare, as Python
// writes them).
func (v jsonValue) compact(b *bytes.Buffer) {
	switch v.kind {
	case jsonNull:
		b.WriteString("null")
	case jsonBool:
		b.WriteString(strconv.FormatBool(v.boolean))
	case jsonNumber:
		b.WriteString(v.str)
	case jsonString:
		writeJSONString(b, v.str)
	case jsonArray:
		b.WriteByte('[')
		for i, item := range v.items {
			if i > 0 {
				b.WriteByte(',')
			}
			item.compact(b)
		}
		b.WriteByte(']')
	case jsonObject:
		b.WriteByte('{')
		for i, m := range v.members {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, m.name)
			b.WriteByte(':')
			m.value.compact(b)
		}
		b.WriteByte('}')
	}
}

func writeJSONString(b *bytes.Buffer, s string) {
	if !utf8.ValidString(s) {
		s = string([]rune(s)) // json.Marshal would do the same
	}
	q, _ := json.Marshal(s)
	b.Write(q)
}
