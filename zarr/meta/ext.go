package meta

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/zarrfs/zarrfs/codec"
)

// compact returns raw as compact JSON text for messages, shortened to 200 bytes.
func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(raw)
	}
	s := b.String()
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// parseExt parses the extension value raw of member what, strictly
// (codec.ParseExtension); a malformed one is invalid metadata.
func parseExt(what string, raw json.RawMessage) (codec.Extension, error) {
	e, err := codec.ParseExtension(what, raw)
	if err != nil {
		return codec.Extension{}, fmt.Errorf("%w: %w", ErrInvalidMetadata, err)
	}
	return e, nil
}

// parseExtension parses an extension value (parseExt) and returns its name
// and configuration.
func parseExtension(what string, raw json.RawMessage) (string, codec.Config, error) {
	e, err := parseExt(what, raw)
	return e.Name, e.Config, err
}

// typeName returns a data type for messages: the string itself, the name
// of an extension object, or else compact JSON.
func typeName(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var obj struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &obj) == nil && obj.Name != "" {
		return obj.Name
	}
	return compact(raw)
}
