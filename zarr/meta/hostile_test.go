package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/internal/pyjson"
)

// hostileSeeds returns the files of zarr/testdata/hostile/meta (whose
// documents TestHostileMetadata reads through a hierarchy) whose names
// start with prefix, for fuzz corpora.
func hostileSeeds(f *testing.F, prefix string) [][]byte {
	return peertest.Files(f, "zarr/testdata/hostile/meta/"+prefix+"*")
}

// hostileMembers returns member key of every hostile document whose name
// starts with prefix and that has it, for fuzz corpora.
func hostileMembers(f *testing.F, prefix, key string) []json.RawMessage {
	f.Helper()
	var out []json.RawMessage
	for _, doc := range hostileSeeds(f, prefix) {
		var obj map[string]json.RawMessage
		if json.Unmarshal(doc, &obj) == nil && obj[key] != nil {
			out = append(out, obj[key])
		}
	}
	return out
}

// FuzzDecodeObject: every metadata document goes through DecodeObject; what
// it accepts is one JSON object (once pyjson.Turn has turned Python's bare
// NaN and Infinity into strings, which it does to nothing in valid JSON)
// with no repeated member names.
func FuzzDecodeObject(f *testing.F) {
	f.Add([]byte(`{"a": {"b": [1, {"c": 2, "C": 3}]}, "A2": null}`))
	f.Add([]byte(`{"a": 1, "a": 2}`))
	f.Add([]byte(`{"a": [{"x": 1}, {"x": 2}], "b": {"x": {"x": 1}}}`))
	f.Add([]byte(`{"\u0061": 1, "a": 2}`))
	f.Add([]byte(`{"k\"": {"0": 0, "1": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9, "10": 10, "11": 11, "12": 12, "13": 13, "14": 14, "15": 15, "16": 16, "17": 17, "3": 3}, "K\"": []}`))
	f.Add([]byte(`[{"a": 1}, {"a": 1}, {"b": [{"c": 1, "C": 1}]}]`))
	f.Add([]byte(`{"a": NaN, "b": [-Infinity, {"c": Infinity}], NaN: 1}`))
	// Documents scanObject reads in one pass, and near misses.
	for _, d := range v2Docs {
		f.Add([]byte(d.zarray))
		f.Add([]byte(d.attr))
	}
	f.Add([]byte(`{"a": [-0, 0.5e+3, 1E-2, -12.25, true, false, null, "\u00e9\n\/", "é"], "b": {}, "c": [], "d": {"e": {"f": [[]]}}}`))
	f.Add([]byte(`{"a": 01}`))
	f.Add([]byte(`{"a": 1.}`))
	f.Add([]byte(`{"a": -}`))
	f.Add([]byte(`{"a": "\x"}`))
	f.Add([]byte("{\"a\": \"\t\"}"))
	f.Add([]byte(`{"a": 1} x`))
	f.Add([]byte(`{"a": 1,}`))
	f.Add([]byte(`{"Zarr_Format": 2, "zarr_format": 2}`))
	f.Add([]byte(`{"a1": 1, "a2": 2, "a3": 3, "a4": 4, "a5": 5, "a6": 6, "a7": 7, "a8": 8, "a9": 9, "a10": 10, "a11": 11, "a12": 12, "a13": 13, "a14": 14, "a15": 15, "a16": 16, "a17": 17, "A3": 3}`))
	f.Add([]byte(`{"x": {"a1": 1, "a2": 2, "a3": 3, "a4": 4, "a5": 5, "a6": 6, "a7": 7, "a8": 8, "a9": 9, "a10": 10, "a11": 11, "a12": 12, "a13": 13, "a14": 14, "a15": 15, "a16": 16, "a17": 17, "a3": 3, "A3": 3}}`))
	f.Add([]byte(`{"a": -Infinity, "b": "NaN", "c": [NaN]}`))
	f.Add([]byte(`{"a": -Inf}`))
	f.Add([]byte(strings.Repeat("[", 300) + strings.Repeat("]", 300)))
	f.Add([]byte(`{"a": ` + strings.Repeat("[", 300) + strings.Repeat("]", 300) + `}`))
	for _, prefix := range []string{"v1-", "v2-", "v3-"} {
		for _, b := range hostileSeeds(f, prefix) {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		if json.Valid(doc) {
			fast, slow := pyjson.CheckNames(doc), memberNamesByTokens(doc)
			if (fast == nil) != (slow == nil) {
				t.Fatalf("checkMemberNames: %v; by tokens: %v", fast, slow)
			}
			sameMembers(t, doc)
			if !bytes.Equal(pyjson.Turn(doc), doc) {
				t.Fatalf("pyjson.Turn changed valid JSON %q to %q", doc, pyjson.Turn(doc))
			}
		}
		sameAsSlowly(t, doc)
		obj, err := DecodeObject("doc", doc)
		if err != nil {
			if !errors.Is(err, ErrInvalidMetadata) {
				t.Fatalf("error %v does not match ErrInvalidMetadata", err)
			}
			return
		}
		if obj == nil || !json.Valid(pyjson.Turn(doc)) {
			t.Fatalf("accepted %q", doc)
		}
		folded := map[string]bool{}
		for k := range obj {
			if folded[strings.ToLower(k)] {
				t.Fatalf("accepted case-variant member %q", k)
			}
			folded[strings.ToLower(k)] = true
		}
	})
}

// sameAsSlowly fails t unless decodeObject, which reads a usual document
// in one pass (scanObject), returns for doc what the general path
// returns: the same members, error and turned document.
func sameAsSlowly(t *testing.T, doc []byte) {
	t.Helper()
	got, gotDoc, gotErr := decodeObject("doc", doc, true)
	if _, checked, err := decodeObject("doc", doc, false); fmt.Sprint(err) != fmt.Sprint(gotErr) || !bytes.Equal(checked, gotDoc) {
		t.Fatalf("decodeObject(%q) without members: %q, %v; with: %q, %v", doc, checked, err, gotDoc, gotErr)
	}
	wantDoc := pyjson.Turn(doc)
	want, wantErr := decodeObjectSlowly("doc", wantDoc)
	if fmt.Sprint(gotErr) != fmt.Sprint(wantErr) {
		t.Fatalf("decodeObject(%q): error %v, slowly %v", doc, gotErr, wantErr)
	}
	list, err := decodeMembers("doc", doc)
	if fmt.Sprint(err) != fmt.Sprint(wantErr) {
		t.Fatalf("decodeMembers(%q): error %v, slowly %v", doc, err, wantErr)
	}
	if gotErr != nil {
		return
	}
	n := len(list.m)
	if list.m == nil {
		n = len(list.list)
	}
	if n != len(want) {
		t.Fatalf("decodeMembers(%q): %d members, slowly %d", doc, n, len(want))
	}
	for k, v := range want {
		if g, found := list.lookup(k); !found || !bytes.Equal(g, v) {
			t.Fatalf("decodeMembers(%q): member %q is %q, slowly %q", doc, k, g, v)
		}
	}
	if !bytes.Equal(gotDoc, wantDoc) {
		t.Fatalf("decodeObject(%q): document %q, slowly %q", doc, gotDoc, wantDoc)
	}
	if len(got) != len(want) {
		t.Fatalf("decodeObject(%q): %d members, slowly %d", doc, len(got), len(want))
	}
	for k, v := range want {
		if g, found := got[k]; !found || !bytes.Equal(g, v) {
			t.Fatalf("decodeObject(%q): member %q is %q, slowly %q", doc, k, g, v)
		}
	}
}

// sameMembers fails t unless splitObject splits doc (valid JSON) into the
// members encoding/json decodes.
func sameMembers(t *testing.T, doc []byte) {
	t.Helper()
	var want map[string]json.RawMessage
	err := json.Unmarshal(doc, &want)
	got, ok := pyjson.Split(doc)
	if ok != (err == nil && want != nil) {
		t.Fatalf("pyjson.Split(%q): ok %v; encoding/json: %v, %v", doc, ok, want, err)
	}
	if len(got) != len(want) {
		t.Fatalf("pyjson.Split(%q): %d members, encoding/json %d", doc, len(got), len(want))
	}
	for k, v := range want {
		if g, found := got[k]; !found || !bytes.Equal(g, v) {
			t.Fatalf("pyjson.Split(%q): member %q is %q, encoding/json %q", doc, k, g, v)
		}
	}
}

// memberNamesByTokens is checkMemberNames written plainly with
// encoding/json's tokenizer (and 30 times slower): FuzzDecodeObject checks
// that the two agree.
func memberNamesByTokens(doc []byte) error {
	type frame struct {
		names   map[string]bool // nil for an array
		wantKey bool
	}
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	var stack []frame
	folded := map[string]bool{}
	valueDone := func() {
		if n := len(stack); n > 0 && stack[n-1].names != nil {
			stack[n-1].wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if n := len(stack); n > 0 && stack[n-1].wantKey {
			if name, ok := tok.(string); ok {
				top := &stack[n-1]
				if top.names[name] {
					return errors.New("twice")
				}
				if n == 1 {
					if folded[strings.ToLower(name)] {
						return errors.New("case")
					}
					folded[strings.ToLower(name)] = true
				}
				top.names[name] = true
				top.wantKey = false
				continue
			}
		}
		switch tok {
		case json.Delim('{'):
			stack = append(stack, frame{names: map[string]bool{}, wantKey: true})
		case json.Delim('['):
			stack = append(stack, frame{})
		case json.Delim('}'), json.Delim(']'):
			stack = stack[:len(stack)-1]
			valueDone()
		default:
			valueDone()
		}
	}
}
