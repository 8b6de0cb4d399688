package codec

import (
	"errors"
	"testing"
)

func TestSplitVlen(t *testing.T) {
	good := vlenLayout([]string{"", "a", "héllo"})
	cases := []struct {
		name string
		data []byte
		n    int
		ok   bool
	}{
		{"good", good, 3, true},
		{"any count", good, -1, true},
		{"wrong count", good, 2, false},
		{"no header", good[:3], 3, false},
		{"truncated", good[:len(good)-1], 3, false},
		{"trailing byte", append(append([]byte{}, good...), 0), 3, false},
		{"huge count", []byte{0xff, 0xff, 0xff, 0xff}, -1, false},
		{"huge length", []byte{1, 0, 0, 0, 0xff, 0xff, 0xff, 0x7f, 'a'}, 1, false},
		{"empty", vlenLayout(nil), 0, true},
	}
	for _, tc := range cases {
		elems, err := splitVlen("test", tc.data, tc.n)
		if tc.ok && (err != nil || len(elems) != 3 && tc.n != 0) {
			t.Errorf("%s: %d elements, %v", tc.name, len(elems), err)
		}
		if !tc.ok && !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want ErrCorrupt", tc.name, err)
		}
	}
}

func FuzzSplitVlen(f *testing.F) {
	f.Add(vlenLayout([]string{"a", "bc"}), 2)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		elems, err := splitVlen("fuzz", data, n)
		if err != nil {
			return
		}
		if got := vlenLayout(toStrings(elems)); string(got) != string(data) {
			t.Fatalf("re-encoding gives %q, want %q", got, data)
		}
	})
}

func toStrings(elems [][]byte) []string {
	s := make([]string, len(elems))
	for i, e := range elems {
		s[i] = string(e)
	}
	return s
}
