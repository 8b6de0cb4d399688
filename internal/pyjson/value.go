package pyjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"unicode/utf8"
)

// A Value is one JSON value as its writer meant it: objects keep their
// members' order, numbers their spelling (an integer stays an integer),
// and the bare NaN, Infinity and -Infinity that Python's json module
// writes are numbers, as Python reads them back.
type Value struct {
	Kind    Kind
	Str     string  // a string's value; a number's spelling
	Bool    bool    // a boolean's value
	Items   []Value // an array's items
	Members []Field // an object's members, in order
}

// A Field is a member of an object Value.
type Field struct {
	Name  string
	Value Value
}

// Kind is the JSON type of a Value.
type Kind int

// The kinds of Value.
const (
	Null Kind = iota
	Bool
	Num
	Str
	Array
	Object
)

// maxParseDepth bounds the nesting Parse takes, so a hostile document
// cannot exhaust the stack.
const maxParseDepth = 1000

// ErrSyntax is the error of Parse for what is not one JSON value.
var ErrSyntax = errors.New("pyjson: not JSON")

// Parse parses one JSON value, which may use Python's bare non-finite
// numbers; nothing but white space may follow it.
func Parse(doc []byte) (Value, error) {
	p := parser{doc: doc}
	v, err := p.value(0)
	if err != nil {
		return Value{}, err
	}
	if p.i = SkipSpace(doc, p.i); p.i != len(doc) {
		return Value{}, errors.New("pyjson: data after the JSON value")
	}
	return v, nil
}

type parser struct {
	doc []byte
	i   int
}

// eat skips white space and then the byte c, reporting whether c was there.
func (p *parser) eat(c byte) bool {
	p.i = SkipSpace(p.doc, p.i)
	if p.i < len(p.doc) && p.doc[p.i] == c {
		p.i++
		return true
	}
	return false
}

// list reads the members of an object or the items of an array, its
// opening byte read, up to its closing byte end: elem reads one, and a
// comma stands between them.
func (p *parser) list(end byte, elem func() error) error {
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
		return ErrSyntax
	}
}

func (p *parser) value(depth int) (Value, error) {
	if depth > maxParseDepth {
		return Value{}, errors.New("pyjson: JSON nested too deep")
	}
	p.i = SkipSpace(p.doc, p.i)
	if p.i >= len(p.doc) {
		return Value{}, ErrSyntax
	}
	var ok bool
	switch c := p.doc[p.i]; c {
	case '{':
		p.i++
		v := Value{Kind: Object}
		err := p.list('}', func() error {
			p.i = SkipSpace(p.doc, p.i)
			name, err := p.string()
			if err != nil {
				return err
			}
			if !p.eat(':') {
				return ErrSyntax
			}
			item, err := p.value(depth + 1)
			if err != nil {
				return err
			}
			v.Members = append(v.Members, Field{name, item})
			return nil
		})
		if err != nil {
			return Value{}, err
		}
		return v, nil
	case '[':
		p.i++
		v := Value{Kind: Array}
		err := p.list(']', func() error {
			item, err := p.value(depth + 1)
			if err != nil {
				return err
			}
			v.Items = append(v.Items, item)
			return nil
		})
		if err != nil {
			return Value{}, err
		}
		return v, nil
	case '"':
		s, err := p.string()
		return Value{Kind: Str, Str: s}, err
	}
	for _, w := range [...]struct {
		word string
		v    Value
	}{
		{"true", Value{Kind: Bool, Bool: true}},
		{"false", Value{Kind: Bool}},
		{"null", Value{Kind: Null}},
		{"NaN", Value{Kind: Num, Str: "NaN"}},
		{"Infinity", Value{Kind: Num, Str: "Infinity"}},
		{"-Infinity", Value{Kind: Num, Str: "-Infinity"}},
	} {
		if p.i, ok = literal(p.doc, p.i, w.word); ok {
			return w.v, nil
		}
	}
	start := p.i
	if p.i, ok, _ = Number(p.doc, p.i); !ok {
		return Value{}, ErrSyntax
	}
	return Value{Kind: Num, Str: string(p.doc[start:p.i])}, nil
}

// string parses a JSON string at p.i, as encoding/json decodes it.
func (p *parser) string() (string, error) {
	end, plain, ok := ScanString(p.doc, p.i)
	if !ok {
		return "", ErrSyntax
	}
	raw := p.doc[p.i:end]
	p.i = end
	if plain {
		return string(raw[1 : len(raw)-1]), nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", ErrSyntax
	}
	return s, nil
}

// Float returns a number's value (NaN and the infinities included).
func (v Value) Float() float64 {
	switch v.Str {
	case "NaN":
		return math.NaN()
	case "Infinity":
		return math.Inf(1)
	case "-Infinity":
		return math.Inf(-1)
	}
	f, _ := strconv.ParseFloat(v.Str, 64) // ±Inf for numbers out of range
	return f
}

// Int returns a number written as an integer (no fraction, no exponent)
// that fits an int64.
func (v Value) Int() (int64, bool) {
	i, err := strconv.ParseInt(v.Str, 10, 64)
	return i, err == nil
}

// Compact writes v as compact JSON (non-finite numbers bare, as Python
// writes them).
func (v Value) Compact(b *bytes.Buffer) {
	switch v.Kind {
	case Null:
		b.WriteString("null")
	case Bool:
		b.WriteString(strconv.FormatBool(v.Bool))
	case Num:
		b.WriteString(v.Str)
	case Str:
		writeString(b, v.Str)
	case Array:
		b.WriteByte('[')
		for i, item := range v.Items {
			if i > 0 {
				b.WriteByte(',')
			}
			item.Compact(b)
		}
		b.WriteByte(']')
	case Object:
		b.WriteByte('{')
		for i, m := range v.Members {
			if i > 0 {
				b.WriteByte(',')
			}
			writeString(b, m.Name)
			b.WriteByte(':')
			m.Value.Compact(b)
		}
		b.WriteByte('}')
	}
}

func writeString(b *bytes.Buffer, s string) {
	if !utf8.ValidString(s) {
		s = string([]rune(s)) // json.Marshal would do the same
	}
	q, _ := json.Marshal(s)
	b.Write(q)
}
