// Package pyjson reads JSON as the writers of Zarr metadata really emit
// it: Python's json module writes bare NaN, Infinity and -Infinity for
// non-finite floats (zarr-python 2, xarray, GDAL and netCDF-c do so in
// attributes and fill values), which encoding/json refuses. It is the one
// JSON reader of zarrfs below encoding/json:
//
//   - Turn spells those bare tokens as the strings Zarr uses for them, so
//     that encoding/json can read the document;
//   - Scan checks a usual document and splits its top-level members in one
//     pass (the metadata parsers' fast path); Split, CheckNames and
//     ValueEnd are the general path for the documents Scan leaves;
//   - Walk and SkipValue check and walk documents of any size without a
//     copy (consolidated metadata);
//   - Parse reads one value keeping what encoding/json loses: the order of
//     an object's members and a number's spelling (the NetCDF and ENVI
//     views write attributes in document order, integers as integers);
//   - String, ScanString, Number, SkipSpace and Digits are the small
//     readers the others are made of, for the parsers' own fast paths.
//
// Nothing here panics or recurses without bound on hostile input.
package pyjson

import (
	"bytes"
	"encoding/json"
	"strings"
)

// MaxDepth is the nesting beyond which Scan leaves a document to the
// general path and SkipValue and Walk refuse it (encoding/json has its
// own limit).
const MaxDepth = 200

// SkipSpace returns the index of the first byte of doc from i on that is
// not JSON white space.
func SkipSpace(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\r' || doc[i] == '\n') {
		i++
	}
	return i
}

// Digits returns the index of the first byte of doc from i on that is not
// a decimal digit.
func Digits(doc []byte, i int) int {
	for i < len(doc) && doc[i] >= '0' && doc[i] <= '9' {
		i++
	}
	return i
}

// String returns the characters of the JSON string raw when it holds only
// printable ASCII and no escape (the string json.Unmarshal reads is then
// these bytes); ok is false for any other raw.
func String(raw []byte) (chars []byte, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return nil, false
		}
	}
	return raw[1 : len(raw)-1], true
}

// ScanString checks the JSON string at doc[i] and returns the index after
// it; plain is set when it holds only ASCII and no escape.
func ScanString(doc []byte, i int) (end int, plain, ok bool) {
	if i >= len(doc) || doc[i] != '"' {
		return i, false, false
	}
	plain = true
	for j := i + 1; j < len(doc); j++ {
		switch c := doc[j]; {
		case c == '"':
			return j + 1, plain, true
		case c < 0x20:
			return j, false, false
		case c >= 0x80:
			plain = false
		case c == '\\':
			plain = false
			if j++; j >= len(doc) {
				return j, false, false
			}
			switch doc[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if j+4 >= len(doc) {
					return j, false, false
				}
				for _, h := range doc[j+1 : j+5] {
					if !isHex(h) {
						return j, false, false
					}
				}
				j += 4
			default:
				return j, false, false
			}
		}
	}
	return len(doc), false, false
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

// Number checks the JSON number at doc[i] and returns the index after it.
// python is set when it is instead Python's bare -Infinity (not taken).
func Number(doc []byte, i int) (end int, ok, python bool) {
	j := i
	if j >= len(doc) {
		return j, false, false
	}
	if doc[j] == '-' {
		if j++; j >= len(doc) {
			return j, false, false
		}
		if doc[j] == 'I' {
			return j, false, true
		}
	}
	switch {
	case doc[j] == '0':
		j++
	case doc[j] >= '1' && doc[j] <= '9':
		j = Digits(doc, j)
	default:
		return j, false, false
	}
	if j < len(doc) && doc[j] == '.' {
		k := Digits(doc, j+1)
		if k == j+1 {
			return k, false, false
		}
		j = k
	}
	if j < len(doc) && (doc[j] == 'e' || doc[j] == 'E') {
		j++
		if j < len(doc) && (doc[j] == '+' || doc[j] == '-') {
			j++
		}
		k := Digits(doc, j)
		if k == j {
			return k, false, false
		}
		j = k
	}
	return j, true, false
}

// IsNumber reports whether raw is one JSON number.
func IsNumber(raw []byte) bool {
	end, ok, _ := Number(raw, 0)
	return ok && end == len(raw)
}

// literal checks that word starts at doc[i].
func literal(doc []byte, i int, word string) (int, bool) {
	if bytes.HasPrefix(doc[i:], []byte(word)) {
		return i + len(word), true
	}
	return i, false
}

// Turn returns doc with the bare NaN, Infinity and -Infinity that
// Python's json module writes for non-finite floats turned into the
// strings "NaN", "Infinity" and "-Infinity", the way Zarr spells them in
// fill values (and zarr-python 3 in attributes). Only values are turned:
// a bare token where a member name belongs, or any other spelling
// ("nan", "+Infinity"), stays as it is and is refused as not JSON, as
// Python refuses it. doc itself is returned when nothing is turned.
func Turn(doc []byte) []byte {
	if !bytes.Contains(doc, []byte("NaN")) && !bytes.Contains(doc, []byte("Infinity")) {
		return doc
	}
	var out []byte // nil until a token is turned
	done := 0      // doc[:done] is in out
	var objects []bool
	wantName := false
	for i := 0; i < len(doc); i++ {
		switch c := doc[i]; c {
		case '"':
			for i++; i < len(doc) && doc[i] != '"'; i++ {
				if doc[i] == '\\' {
					i++
				}
			}
			wantName = false
		case '{', '[':
			objects = append(objects, c == '{')
			wantName = c == '{'
		case '}', ']':
			if len(objects) > 0 {
				objects = objects[:len(objects)-1]
			}
			wantName = false
		case ',':
			wantName = len(objects) > 0 && objects[len(objects)-1]
		case ':':
			wantName = false
		case 'N', 'I', '-':
			if wantName || !valueStart(doc, i) {
				continue
			}
			for _, tok := range []string{"NaN", "Infinity", "-Infinity"} {
				if bytes.HasPrefix(doc[i:], []byte(tok)) {
					out = append(append(append(append(out, doc[done:i]...), '"'), tok...), '"')
					i += len(tok) - 1
					done = i + 1
					break
				}
			}
		}
	}
	if out == nil {
		return doc
	}
	return append(out, doc[done:]...)
}

// valueStart reports whether a value can begin at doc[i]: the last byte
// before it that is not white space opens a list, follows a member name or
// separates items, or there is none.
func valueStart(doc []byte, i int) bool {
	for i--; i >= 0; i-- {
		switch doc[i] {
		case ' ', '\t', '\r', '\n':
		case '[', ':', ',':
			return true
		default:
			return false
		}
	}
	return true
}

// MemberName returns the string a quoted member name of valid JSON stands
// for, as encoding/json reads it (escapes decoded, invalid UTF-8 replaced).
func MemberName(quoted []byte) (string, bool) {
	if len(quoted) < 2 {
		return "", false
	}
	plain := true
	for _, c := range quoted[1 : len(quoted)-1] {
		if c < 0x20 || c >= 0x80 || c == '\\' || c == '"' {
			plain = false
			break
		}
	}
	if plain {
		return string(quoted[1 : len(quoted)-1]), true
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", false
	}
	return s, true
}

// ValueEnd returns the index just after the JSON value of valid JSON that
// starts at doc[i], or at most len(doc).
func ValueEnd(doc []byte, i int) int {
	if i >= len(doc) {
		return i
	}
	switch doc[i] {
	case '"':
		for j := i + 1; j < len(doc); j++ {
			switch doc[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(doc)
	case '{', '[':
		depth := 0
		for j := i; j < len(doc); j++ {
			switch doc[j] {
			case '"':
				j = ValueEnd(doc, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(doc)
	default: // a number, true, false or null
		j := i
		for j < len(doc) && !strings.ContainsRune(",}] \t\r\n", rune(doc[j])) {
			j++
		}
		return j
	}
}
