// Package jsonplain reads the plain JSON values that metadata documents
// are mostly made of without encoding/json, for the metadata parsers'
// fast paths; anything it does not take is left to encoding/json.
package jsonplain

// String returns the characters of the JSON string raw when it holds only
// printable ASCII and no escape (the string json.Unmarshal reads is then
// these bytes); ok is false for any other raw.
func String(raw []byte) (chars []byte, ok bool) {
	if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
		return nil, false
	}
	for _, c := range raw[1 : len(raw)-1] {
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return nil, false
		}
	}
	return raw[1 : len(raw)-1], true
}
