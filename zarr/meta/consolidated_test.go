package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/pyjson"
)

func TestConsolidatedEntries(t *testing.T) {
	for _, c := range []struct {
		name, obj string
		want      []string // key=doc
		err       bool
	}{
		{"empty", `{}`, nil, false},
		{"sorted", ` { "b/.zarray" : {"x": 1}, "a/.zgroup": {} } `, []string{`a/.zgroup={}`, `b/.zarray={"x": 1}`}, false},
		{"repeated: last wins", `{"a": 1, "b": 2, "a": 3}`, []string{"a=3", "b=2"}, false},
		{"case kept apart", `{"a": 1, "A": 2}`, []string{"A=2", "a=1"}, false},
		{"python literals", `{"a": {"fill_value": NaN, "l": [Infinity, -Infinity]}}`, []string{`a={"fill_value": NaN, "l": [Infinity, -Infinity]}`}, false},
		{"escaped name", `{"\u0061/.zarray": {}}`, []string{"a/.zarray={}"}, false},
		{"unicode in values", `{"a": {"température": "°C", "é": "\u00e9"}}`, []string{`a={"température": "°C", "é": "\u00e9"}`}, false},
		{"not an object", `[1]`, nil, true},
		{"trailing data", `{"a": 1} x`, nil, true},
		{"unterminated", `{"a": {"b": 1}`, nil, true},
		{"bad value", `{"a": nul}`, nil, true},
		{"bad name", `{a: 1}`, nil, true},
		{"no colon", `{"a" 1}`, nil, true},
		{"too deep", `{"a": ` + strings.Repeat("[", pyjson.MaxDepth+2) + strings.Repeat("]", pyjson.MaxDepth+2) + `}`, nil, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			es, err := ConsolidatedEntries("test", []byte(c.obj), 0)
			if c.err {
				if !errors.Is(err, ErrInvalidMetadata) {
					t.Fatalf("err = %v, want ErrInvalidMetadata", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range es {
				got = append(got, e.Key+"="+string(e.Doc))
			}
			if fmt.Sprint(got) != fmt.Sprint(c.want) {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// largeConsolidated returns a "metadata" object of n v2 arrays' .zarray
// documents, indented as zarr-python writes them.
func largeConsolidated(n int) []byte {
	var b bytes.Buffer
	b.WriteString("{\n")
	for i := range n {
		if i > 0 {
			b.WriteString(",\n")
		}
		fmt.Fprintf(&b, `        "g%04d/a%03d/.zarray": {
            "chunks": [
                8
            ],
            "compressor": null,
            "dtype": "<f4",
            "fill_value": NaN,
            "filters": null,
            "order": "C",
            "shape": [
                64
            ],
            "zarr_format": 2
        }`, i/100, i%100)
	}
	b.WriteString("\n}")
	return b.Bytes()
}

// TestConsolidatedEntriesLarge: a "metadata" object over the 16 MiB limit
// for single documents is walked with a number of allocations that does
// not grow with its members (the list of them aside, grown by doubling):
// no copy per node, every document a sub-slice of the one buffer.
func TestConsolidatedEntriesLarge(t *testing.T) {
	const n = 80000
	obj := largeConsolidated(n)
	if len(obj) <= MaxDocumentSize {
		t.Fatalf("the document is %d bytes, not over the %d-byte limit", len(obj), MaxDocumentSize)
	}
	var es []ConsolidatedEntry
	var err error
	allocs := testing.AllocsPerRun(2, func() { es, err = ConsolidatedEntries("big", obj, 0) })
	if err != nil {
		t.Fatal(err)
	}
	if len(es) != n {
		t.Fatalf("%d entries, want %d", len(es), n)
	}
	// Three lists grown by appending (about 25 allocations each for
	// 80,000 members), the keys' string and the entries.
	if allocs > 100 {
		t.Errorf("%.0f allocations for %d members: a copy per member?", allocs, n)
	}
	for _, i := range []int{0, n / 2, n - 1} {
		e := es[i]
		if want := fmt.Sprintf("g%04d/a%03d/.zarray", i/100, i%100); e.Key != want {
			t.Errorf("entry %d is %q, want %q", i, e.Key, want)
		}
		// The document lies in obj's memory.
		name := []byte(`"` + e.Key + `": `)
		if start := bytes.Index(obj, name) + len(name); start < len(name) || &obj[start] != &e.Doc[0] {
			t.Errorf("entry %d's document is a copy", i)
		}
	}
	if d := FindConsolidated(es, "g0400/a007/.zarray"); !bytes.Contains(d, []byte(`"fill_value": NaN`)) {
		t.Errorf("FindConsolidated: %q", d)
	}
	if d := FindConsolidated(es, "g0400/a007/.zattrs"); d != nil {
		t.Errorf("FindConsolidated of a missing key: %q", d)
	}
	if _, err := ConsolidatedEntries("big", obj, n-1); !errors.Is(err, ErrTooManyMembers) {
		t.Errorf("%d members allowed %d: %v, want ErrTooManyMembers", n, n-1, err)
	}
	if es, err := ConsolidatedEntries("big", obj, n); err != nil || len(es) != n {
		t.Errorf("%d members allowed %d: %d, %v", n, n, len(es), err)
	}
}

func TestCompactInPlace(t *testing.T) {
	for _, doc := range []string{
		"", "{}", " { \"a b\" : [ 1 , 2 ] ,\n\t\"c\": \"x \\\" y\\\\\" } ",
		`{"a": "\\", "b": " "}`, `{"a": NaN}`,
	} {
		b := []byte(doc)
		got := string(CompactInPlace(b))
		var want bytes.Buffer
		if json.Compact(&want, pyjson.Turn([]byte(doc))) == nil && string(pyjson.Turn([]byte(got))) != want.String() {
			t.Errorf("CompactInPlace(%q) = %q, want %q", doc, got, want.String())
		}
	}
}

func TestWithoutMember(t *testing.T) {
	got, err := WithoutMember("zarr.json", []byte(`{"zarr_format": 3, "consolidated_metadata": {"metadata": {}}, "node_type": "group"}`), "consolidated_metadata")
	if err != nil || string(got) != `{"zarr_format":3,"node_type":"group"}` {
		t.Errorf("WithoutMember = %q, %v", got, err)
	}
	if v, err := TopMember("zarr.json", []byte(`{"a": 1, "b": [2], "a": 3}`), "a"); err != nil || string(v) != "3" {
		t.Errorf("TopMember = %q, %v", v, err)
	}
}

// FuzzConsolidatedEntries: any input is refused or walked into entries
// whose documents are JSON values; never a panic. Valid JSON objects
// are walked into the members encoding/json finds.
func FuzzConsolidatedEntries(f *testing.F) {
	for _, s := range []string{`{}`, `{"a/.zarray": {"shape": [1]}, "a/.zattrs": {}}`, `{"a": NaN, "b": -Infinity}`,
		`{"a": 1, "a": 2}`, `{"\u00e9": "\ud800"}`, `{"a": [` + strings.Repeat("[", 300), `{"a": "\`, `{"a": 1}}`, "{\"a\":\x00}",
		`{"a": -}`, `{"a": 1e}`, `{"a": "x"` + "\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, obj []byte) {
		es, err := ConsolidatedEntries("fuzz", obj, 0)
		if err != nil {
			return
		}
		for i, e := range es {
			if !json.Valid(pyjson.Turn(e.Doc)) {
				t.Errorf("entry %q: %q is not JSON", e.Key, e.Doc)
			}
			if i > 0 && es[i-1].Key >= e.Key {
				t.Errorf("entries not sorted: %q, %q", es[i-1].Key, e.Key)
			}
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(obj, &m) == nil && m != nil && len(m) != len(es) {
			t.Errorf("%d entries, encoding/json finds %d members", len(es), len(m))
		}
		c := CompactInPlace(bytes.Clone(obj))
		var want bytes.Buffer
		if json.Compact(&want, obj) == nil && string(c) != want.String() {
			t.Errorf("CompactInPlace = %q, json.Compact %q", c, want.String())
		}
	})
}
