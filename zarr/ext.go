package zarr

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

// extension is a parsed v3 extension point value: a name, or an object
// {"name", "configuration", "must_understand"}.
type extension struct {
	name           string
	config         codec.Config
	mustUnderstand bool
}

// parseExt parses the extension value raw of member what.
func parseExt(what string, raw json.RawMessage) (extension, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return extension{}, fmt.Errorf("%w: %s: empty name", ErrInvalidMetadata, what)
		}
		return extension{name: s, config: codec.Config{}, mustUnderstand: true}, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return extension{}, fmt.Errorf("%w: %s %s is neither a name nor an object", ErrInvalidMetadata, what, compact(raw))
	}
	e := extension{config: codec.Config{}, mustUnderstand: true}
	if err := json.Unmarshal(obj["name"], &e.name); err != nil || e.name == "" {
		return extension{}, fmt.Errorf("%w: %s %s has no name", ErrInvalidMetadata, what, compact(raw))
	}
	if c, ok := obj["configuration"]; ok && string(c) != "null" {
		if err := json.Unmarshal(c, &e.config); err != nil || e.config == nil {
			return extension{}, fmt.Errorf("%w: %s %q: configuration is not an object", ErrInvalidMetadata, what, e.name)
		}
	}
	if m, ok := obj["must_understand"]; ok {
		if err := json.Unmarshal(m, &e.mustUnderstand); err != nil {
			return extension{}, fmt.Errorf("%w: %s %q: must_understand is not a boolean", ErrInvalidMetadata, what, e.name)
		}
	}
	for k := range obj {
		switch k {
		case "name", "configuration", "must_understand":
		default:
			return extension{}, fmt.Errorf("%w: %s %q: unknown member %q", ErrInvalidMetadata, what, e.name, k)
		}
	}
	return e, nil
}

// parseExtension parses an extension value (parseExt) and returns its name
// and configuration.
func parseExtension(what string, raw json.RawMessage) (string, codec.Config, error) {
	e, err := parseExt(what, raw)
	return e.name, e.config, err
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
