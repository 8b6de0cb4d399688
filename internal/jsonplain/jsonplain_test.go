package jsonplain

import (
	"encoding/json"
	"testing"
)

// FuzzString checks String against json.Unmarshal: whatever it takes,
// encoding/json reads as the same string.
func FuzzString(f *testing.F) {
	for _, s := range []string{`"<f4"`, `""`, `"a\"b"`, `"\u00e9"`, `"é"`, `"a b"`, `"`, `x`, `"tab	"`, `1`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		chars, ok := String(raw)
		if !ok {
			return
		}
		var want string
		if err := json.Unmarshal(raw, &want); err != nil || string(chars) != want {
			t.Fatalf("String(%q) = %q; json.Unmarshal %q, %v", raw, chars, want, err)
		}
	})
}
