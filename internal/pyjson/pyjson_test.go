package pyjson

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

func TestTurn(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": NaN}`:                                   `{"a": "NaN"}`,
		`[Infinity, -Infinity, 1]`:                     `["Infinity", "-Infinity", 1]`,
		`{"s": "NaN \" Infinity", "f": -Infinity}`:     `{"s": "NaN \" Infinity", "f": "-Infinity"}`,
		`{"s": "a\\", "f": NaN}`:                       `{"s": "a\\", "f": "NaN"}`,
		`{"plain": 1}`:                                 `{"plain": 1}`,
		`{"a": [NaN, {"b": Infinity}], "c":-Infinity}`: `{"a": ["NaN", {"b": "Infinity"}], "c":"-Infinity"}`,
		`NaN`: `"NaN"`,
		// Not where a member name belongs, and no other spelling:
		// Python refuses these, and so does meta.DecodeObject.
		`{NaN: 1}`:                   `{NaN: 1}`,
		`{"a": 1, Infinity: 2}`:      `{"a": 1, Infinity: 2}`,
		`{"a": nan, "b": +Infinity}`: `{"a": nan, "b": +Infinity}`,
		`{"a": -1.5, "b": -NaN}`:     `{"a": -1.5, "b": -NaN}`,
	} {
		if got := string(Turn([]byte(in))); got != want {
			t.Errorf("Turn(%s) = %s, want %s", in, got, want)
		}
	}
}

// FuzzString checks String against json.Unmarshal: whatever it takes,
// encoding/json reads as the same string.
func FuzzString(f *testing.F) {
	for _, s := range []string{`"<f4"`, `""`, `"a\"b"`, `"\u00e9"`, `"é"`, `"a b"`, `"`, `x`, `"tab	"`, `1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		chars, ok := String(raw)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(raw, &want); err != nil || string(chars) != want {
			t.Fatalf("String(%q) = %q; json.Unmarshal %q, %v", raw, chars, want, err)
		}
	})
}

// TestParse: members in document order, numbers as spelled, Python's
// bare non-finite numbers as numbers.
func TestParse(t *testing.T) {
	v, err := Parse([]byte(` {"z": 1, "a": [1.50, NaN, -Infinity, "s\u00e9"], "m": {"y": null, "x": true}} `))
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	v.Compact(&b)
	if want := `{"z":1,"a":[1.50,NaN,-Infinity,"sé"],"m":{"y":null,"x":true}}`; b.String() != want {
		t.Errorf("Compact = %s, want %s", b.String(), want)
	}
	if i, ok := v.Members[0].Value.Int(); !ok || i != 1 {
		t.Errorf("Int = %d, %v", i, ok)
	}
	if f := v.Members[1].Value.Items[2].Float(); f > -1e308 {
		t.Errorf("Float(-Infinity) = %v", f)
	}
	for _, bad := range []string{``, `{`, `{"a" 1}`, `[1,]`, `nan`, `+1`, `{"a":1}x`, `"\x"`, strings.Repeat("[", maxParseDepth+2)} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q) took it", bad)
		}
	}
}

// FuzzParse checks Parse against encoding/json: what it takes is valid
// JSON once Turned, and what it writes back (Compact) reads as the same
// value; valid JSON it takes whole.
func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a": NaN, "b": [1, -Infinity, "x"]}`, `{"_FillValue": -9999, "scale": 0.01}`, `[`, `{"a":1,"a":2}`,
		`{"\ud800": "\u00e9"}`, `-Infinityx`, `[NaN,Infinity,-Infinity]`, `{"a": [[[[[]]]]]}`, "\"\xff\"", `1e400`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		v, err := Parse(doc)
		if err != nil {
			if json.Valid(doc) && bytes.Count(doc, []byte("["))+bytes.Count(doc, []byte("{")) < maxParseDepth {
				t.Fatalf("Parse(%q) refused valid JSON: %v", doc, err)
			}
			return
		}
		if !json.Valid(Turn(doc)) {
			t.Fatalf("Parse(%q) took what is not JSON", doc)
		}
		var b bytes.Buffer
		v.Compact(&b)
		again, err := Parse(b.Bytes())
		if err != nil || !reflect.DeepEqual(again, v) {
			t.Fatalf("Parse(%q) wrote back %q, read as %+v, %v", doc, b.Bytes(), again, err)
		}
	})
}

// FuzzWalk checks Walk (and so SkipValue, the scanner's lenient mode)
// against encoding/json: an object it takes is valid JSON once Turned,
// and a valid JSON object not nested too deep it takes, member by member.
func FuzzWalk(f *testing.F) {
	for _, s := range []string{`{"a/.zarray": {"shape": [1], "fill_value": NaN}, "b": -Infinity}`, `{"a": 1, "a": 2}`,
		`{"\u00e9": [true, false, null, "x"]}`, `{"a": -Inf}`, `{"a": [1,]}`, `{} x`, `{"a": {"b": NaN, "b": 1}}`, `[1]`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		n := 0
		err := Walk(doc, func(name []byte, escaped bool, value []byte) {
			n++
			if !json.Valid(Turn(value)) {
				t.Fatalf("Walk(%q): value %q is not JSON", doc, value)
			}
		})
		var obj map[string]json.RawMessage
		jerr := json.Unmarshal(Turn(doc), &obj)
		switch {
		case err == nil && (jerr != nil || obj == nil):
			t.Fatalf("Walk(%q) took it; encoding/json: %v", doc, jerr)
		case err != nil && jerr == nil && obj != nil && bytes.Count(doc, []byte("["))+bytes.Count(doc, []byte("{")) < MaxDepth:
			t.Fatalf("Walk(%q): %v; encoding/json takes it", doc, err)
		}
	})
}
