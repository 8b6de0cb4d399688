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
