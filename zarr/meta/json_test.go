package meta

import (
	"testing"

	"github.com/zarrfs/zarrfs/internal/pyjson"
)

// TestScanObject checks that the usual documents are read in one pass
// (scanObject), and that those with Python's bare NaN are after
// pyjson.Turn; FuzzDecodeObject checks that the pass agrees with the
// general path.
func TestScanObject(t *testing.T) {
	for _, d := range v2Docs {
		for _, doc := range []string{d.zarray, d.attr} {
			if doc == "" {
				continue
			}
			_, outcome := scanObject([]byte(doc))
			if outcome == pyjson.Python {
				_, outcome = scanObject(pyjson.Turn([]byte(doc)))
			}
			if outcome != pyjson.Scanned {
				t.Errorf("%s: scanObject left %s to the general path", d.name, doc)
			}
		}
	}
	for _, doc := range []string{`{"a": 1, "A": 2}`, `{"\u0061": 1}`, `{"a": [1,]}`, `{"é": 1}`} {
		if _, outcome := scanObject([]byte(doc)); outcome != pyjson.Other {
			t.Errorf("scanObject(%s) = %d, want pyjson.Other", doc, outcome)
		}
	}
}
