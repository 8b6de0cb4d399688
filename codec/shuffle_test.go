package codec

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// TestPeerShuffleElementSize: both spellings of the element size decode
// numcodecs' shuffles.
func TestPeerShuffleElementSize(t *testing.T) {
	peertest.NeedPythonModules(t, "import numcodecs", "python3-numcodecs")
	var shuffled map[string]string
	if err := json.Unmarshal(peertest.Oracle(t, "codec/shuffle_numcodecs.py"), &shuffled); err != nil {
		t.Fatal(err)
	}
	raw := make([]byte, 1008)
	for i := range raw {
		raw[i] = byte((i*37 + 11) % 251)
	}
	if len(shuffled) != 6 {
		t.Fatalf("%d sizes from numcodecs", len(shuffled))
	}
	for n, h := range shuffled {
		enc, _ := hex.DecodeString(h)
		for _, cfg := range []string{
			`{"elementsize": ` + n + `}`,
			`{"element_size": ` + n + `}`,
			`{"elementsize": ` + n + `, "element_size": ` + n + `}`,
		} {
			var c Config
			if err := json.Unmarshal([]byte(cfg), &c); err != nil {
				t.Fatal(err)
			}
			s, err := New("shuffle", c)
			if err != nil {
				t.Fatalf("%s: %v", cfg, err)
			}
			got, err := s.(BytesToBytes).Decode(enc, len(raw))
			if err != nil {
				t.Fatalf("%s: %v", cfg, err)
			}
			equalBytes(t, cfg, got, raw)
		}
	}
}

// TestShuffleConfigErrors: an element size that is negative, not an
// integer, or given twice with two values is refused, never ignored.
func TestShuffleConfigErrors(t *testing.T) {
	for _, tc := range []struct{ cfg, want string }{
		{`{"element_size": -2}`, "element_size -2 is negative"},
		{`{"elementsize": -1}`, "elementsize -1 is negative"},
		{`{"element_size": 2.5}`, "element_size"},
		{`{"element_size": "4"}`, "element_size"},
		{`{"elementsize": 4, "element_size": 2}`, "elementsize 4 and element_size 2 disagree"},
	} {
		var c Config
		if err := json.Unmarshal([]byte(tc.cfg), &c); err != nil {
			t.Fatal(err)
		}
		_, err := New("shuffle", c)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.cfg, err, tc.want)
		}
	}
	// Absent (or null) members keep numcodecs' default of 4.
	for _, cfg := range []string{`{}`, `{"element_size": null}`} {
		var c Config
		json.Unmarshal([]byte(cfg), &c)
		s, err := New("shuffle", c)
		if err != nil || s.(Shuffle).ElementSize != 4 {
			t.Errorf("%s: %v %v, want element size 4", cfg, s, err)
		}
	}
}
