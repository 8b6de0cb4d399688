package meta

import "testing"

func TestPythonJSON(t *testing.T) {
	for in, want := range map[string]string{
		`{"a": NaN}`:                                   `{"a": "NaN"}`,
		`[Infinity, -Infinity, 1]`:                     `["Infinity", "-Infinity", 1]`,
		`{"s": "NaN \" Infinity", "f": -Infinity}`:     `{"s": "NaN \" Infinity", "f": "-Infinity"}`,
		`{"s": "a\\", "f": NaN}`:                       `{"s": "a\\", "f": "NaN"}`,
		`{"plain": 1}`:                                 `{"plain": 1}`,
		`{"a": [NaN, {"b": Infinity}], "c":-Infinity}`: `{"a": ["NaN", {"b": "Infinity"}], "c":"-Infinity"}`,
		`NaN`: `"NaN"`,
		// Not where a member name belongs, and no other spelling:
		// Python refuses these, and so does DecodeObject.
		`{NaN: 1}`:                   `{NaN: 1}`,
		`{"a": 1, Infinity: 2}`:      `{"a": 1, Infinity: 2}`,
		`{"a": nan, "b": +Infinity}`: `{"a": nan, "b": +Infinity}`,
		`{"a": -1.5, "b": -NaN}`:     `{"a": -1.5, "b": -NaN}`,
	} {
		if got := string(pythonJSON([]byte(in))); got != want {
			t.Errorf("pythonJSON(%s) = %s, want %s", in, got, want)
		}
	}
}

// TestScanObject checks that the usual documents are read in one pass
// (scanObject), and that those with Python's bare NaN are after
// pythonJSON; FuzzDecodeObject checks that the pass agrees with the
// general path.
func TestScanObject(t *testing.T) {
	for _, d := range v2Docs {
		for _, doc := range []string{d.zarray, d.attr} {
			if doc == "" {
				continue
			}
			_, outcome := scanObject([]byte(doc))
			if outcome == scanPython {
				_, outcome = scanObject(pythonJSON([]byte(doc)))
			}
			if outcome != scanned {
				t.Errorf("%s: scanObject left %s to the general path", d.name, doc)
			}
		}
	}
	for _, doc := range []string{`{"a": 1, "A": 2}`, `{"\u0061": 1}`, `{"a": [1,]}`, `{"é": 1}`} {
		if _, outcome := scanObject([]byte(doc)); outcome != scanOther {
			t.Errorf("scanObject(%s) = %d, want scanOther", doc, outcome)
		}
	}
}
