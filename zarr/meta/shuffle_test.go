package meta

import (
	"errors"
	"strings"
	"testing"
)

// TestShuffleElementSizeMetadata: a shuffle whose two spellings of the
// element size ("elementsize" from numcodecs, "element_size" from the
// zarr-extensions examples) disagree, or that is negative, makes the
// array's metadata invalid; agreeing spellings are read.
func TestShuffleElementSizeMetadata(t *testing.T) {
	for _, c := range []struct {
		name, shuffle, contains string
	}{
		{"registry spelling", `{"element_size": 4}`, ""},
		{"both agree", `{"element_size": 4, "elementsize": 4}`, ""},
		{"disagree", `{"element_size": 4, "elementsize": 2}`, "disagree"},
		{"negative", `{"element_size": -4}`, "negative"},
	} {
		codecs := `[{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "numcodecs.shuffle", "configuration": ` + c.shuffle + `}]`
		for format, doc := range map[Format][]byte{
			FormatV3: v3ZarrJSON(t, map[string]string{"codecs": codecs}),
			FormatV2: v2Zarray(t, map[string]string{"filters": `[` + strings.Replace(c.shuffle, "{", `{"id": "shuffle", `, 1) + `]`}),
		} {
			_, err := arrayError(format, doc)
			if c.contains == "" {
				if err != nil {
					t.Errorf("%s (v%d): %v", c.name, format, err)
				}
				continue
			}
			if !errors.Is(err, ErrInvalidMetadata) || !strings.Contains(err.Error(), c.contains) {
				t.Errorf("%s (v%d): %v, want invalid metadata mentioning %q", c.name, format, err, c.contains)
			}
		}
	}
}
