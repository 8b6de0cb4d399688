package meta

import (
	"bytes"
	"testing"
)

// TestOrderedAttributes: the attributes in document order, as written,
// from an attribute document or a member of a node document.
func TestOrderedAttributes(t *testing.T) {
	for _, c := range []struct {
		name, doc, member string
		want              string // the attributes, compact; "" when not ok
	}{
		{".zattrs", `{"z": 1, "_FillValue": NaN, "a": [1.0, -Infinity]}`, "", `{"z":1,"_FillValue":NaN,"a":[1.0,-Infinity]}`},
		{"zarr.json", `{"zarr_format": 3, "attributes": {"b": "x", "a": {"n": 10}}, "node_type": "group"}`, "attributes", `{"b":"x","a":{"n":10}}`},
		{"zarr.json without attributes", `{"zarr_format": 3, "node_type": "group"}`, "attributes", ""},
		{"not an object", `[1]`, "", ""},
		{"not JSON", `{"a": nan}`, "", ""},
	} {
		attrs, ok := OrderedAttributes([]byte(c.doc), c.member)
		var b bytes.Buffer
		if ok {
			b.WriteByte('{')
			for i, f := range attrs {
				if i > 0 {
					b.WriteByte(',')
				}
				b.WriteString(`"` + f.Name + `":`)
				f.Value.Compact(&b)
			}
			b.WriteByte('}')
		}
		if b.String() != c.want {
			t.Errorf("%s: %q, %v; want %q", c.name, b.String(), ok, c.want)
		}
	}
}
