package codec

import (
	"errors"
	"strings"
	"testing"
)

// TestParseCodecs: the one strict parser of v3 codec lists, for arrays
// and for the codec lists inside sharding's configuration alike.
func TestParseCodecs(t *testing.T) {
	for _, c := range []struct {
		list string
		want string // the error's text, or "" for none
	}{
		{`["bytes"]`, ""},
		{`[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c", "must_understand": true}]`, ""},
		{`[{"name": "bytes", "foo": 1}]`, `codecs[0] "bytes": unknown member "foo"`},
		{`[]`, "must be a non-empty list"},
		{`{"name": "bytes"}`, "must be a non-empty list"},
		{`[""]`, "codecs[0]: empty name"},
		{`[42]`, "codecs[0] 42 is neither a name nor an object"},
		{`[{"configuration": {}}]`, "has no name"},
		{`[{"name": "bytes", "configuration": []}]`, "configuration is not an object"},
		{`[{"name": "bytes", "must_understand": "no"}]`, "must_understand is not a boolean"},
		// Nested in sharding: as strict as the array's own list.
		{`[{"name": "sharding_indexed", "configuration": {"chunk_shape": [2], "codecs": [{"name": "bytes", "foo": 1}]}}]`, `unknown member "foo"`},
		{`[{"name": "sharding_indexed", "configuration": {"chunk_shape": [2], "codecs": []}}]`, "must be a non-empty list"},
	} {
		_, err := ParseCodecList([]byte(c.list))
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.list, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%s: %v, want an error saying %q", c.list, err, c.want)
		}
	}
}

// TestNewCodecsMustUnderstand: a codec this package does not know is left
// out only when it is marked "must_understand": false.
func TestNewCodecsMustUnderstand(t *testing.T) {
	cs, err := ParseCodecList([]byte(`["bytes", {"name": "no-such-codec", "must_understand": false}]`))
	if err != nil || len(cs) != 1 || cs[0].Name() != "bytes" {
		t.Errorf("must_understand false: %v, %v; want [bytes]", cs, err)
	}
	if _, err := ParseCodecList([]byte(`["bytes", {"name": "no-such-codec"}]`)); !errors.Is(err, ErrUnsupported) {
		t.Errorf("an unknown codec: %v, want ErrUnsupported", err)
	}
}
