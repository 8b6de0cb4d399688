package codec

import (
	"encoding/json"
	"testing"
)

// FuzzConfigDecode checks that Config.Decode, which reads plain integers
// and strings itself, decodes every member as json.Unmarshal does, and
// parseBloscShuffle's usual codes as its general path.
func FuzzConfigDecode(f *testing.F) {
	for _, s := range []string{`0`, `-0`, `5`, `-1`, `01`, `1.0`, `1e2`, `9223372036854775807`, `9223372036854775808`, ` 5`, `-`,
		`"lz4"`, `""`, `"a\"b"`, `"\u00e9"`, `"é"`, `"a`, `null`, `true`, `[1]`, `"2"`, `2`, `3`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		cfg := Config{"k": raw}
		var n, wantN int
		_, err := cfg.Decode("c", "k", &n)
		wantErr := json.Unmarshal(raw, &wantN)
		if string(raw) == "null" {
			wantErr, wantN = nil, 0
		}
		if (err == nil) != (wantErr == nil) || err == nil && n != wantN {
			t.Fatalf("Decode(%q) into an int = %d, %v; json.Unmarshal %d, %v", raw, n, err, wantN, wantErr)
		}
		var s, wantS string
		_, err = cfg.Decode("c", "k", &s)
		wantErr = json.Unmarshal(raw, &wantS)
		if string(raw) == "null" {
			wantErr, wantS = nil, ""
		}
		if (err == nil) != (wantErr == nil) || err == nil && s != wantS {
			t.Fatalf("Decode(%q) into a string = %q, %v; json.Unmarshal %q, %v", raw, s, err, wantS, wantErr)
		}
		code, err := parseBloscShuffle(raw)
		var want int
		if string(raw) != "null" && json.Unmarshal(raw, &want) == nil && want >= BloscAutoShuffle && want <= BloscBitShuffle && (err != nil || code != want) {
			t.Fatalf("parseBloscShuffle(%q) = %d, %v; want %d", raw, code, err, want)
		}
	})
}
