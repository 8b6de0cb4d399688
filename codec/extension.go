package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// Extension is a parsed value of a Zarr v3 extension point (a codec, a
// data type, a chunk grid or key encoding, a storage transformer): a name,
// or an object {"name", "configuration", "must_understand"}.
type Extension struct {
	Name   string
	Config Config // never nil
	// MustUnderstand is false only where the value says so: a reader
	// that does not know the extension may then leave it out.
	MustUnderstand bool
}

// ParseExtension parses the extension value raw of the member named what
// (for messages), strictly, as the v3 core specification writes it: a
// non-empty name, a configuration that is an object, a boolean
// must_understand, and no other member.
func ParseExtension(what string, raw json.RawMessage) (Extension, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if s == "" {
			return Extension{}, fmt.Errorf("%s: empty name", what)
		}
		return Extension{Name: s, Config: Config{}, MustUnderstand: true}, nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return Extension{}, fmt.Errorf("%s %s is neither a name nor an object", what, jsonText(raw))
	}
	e := Extension{Config: Config{}, MustUnderstand: true}
	if err := json.Unmarshal(obj["name"], &e.Name); err != nil || e.Name == "" {
		return Extension{}, fmt.Errorf("%s %s has no name", what, jsonText(raw))
	}
	if c, ok := obj["configuration"]; ok && string(c) != "null" {
		if err := json.Unmarshal(c, &e.Config); err != nil || e.Config == nil {
			return Extension{}, fmt.Errorf("%s %q: configuration is not an object", what, e.Name)
		}
	}
	if m, ok := obj["must_understand"]; ok {
		if err := json.Unmarshal(m, &e.MustUnderstand); err != nil {
			return Extension{}, fmt.Errorf("%s %q: must_understand is not a boolean", what, e.Name)
		}
	}
	for k := range obj {
		switch k {
		case "name", "configuration", "must_understand":
		default:
			return Extension{}, fmt.Errorf("%s %q: unknown member %q", what, e.Name, k)
		}
	}
	return e, nil
}

// ParseCodecs parses a v3 "codecs" list: a non-empty list of extension
// values (ParseExtension), named what in messages.
func ParseCodecs(what string, raw json.RawMessage) ([]Extension, error) {
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || len(list) == 0 {
		return nil, fmt.Errorf("%s %s must be a non-empty list", what, jsonText(raw))
	}
	exts := make([]Extension, len(list))
	for i, item := range list {
		var err error
		if exts[i], err = ParseExtension(fmt.Sprintf("%s[%d]", what, i), item); err != nil {
			return nil, err
		}
	}
	return exts, nil
}

// NewCodecs builds the codecs exts name. A codec this package cannot
// build (an *UnsupportedError) that is marked "must_understand": false
// is left out, as the v3 core specification allows.
func NewCodecs(exts []Extension) ([]Codec, error) {
	var cs []Codec
	for _, e := range exts {
		var c Codec
		var err error
		if e.Name == "packbits" {
			// In a v3 chain the name is the registry's array→bytes
			// packbits, not numcodecs' v2 filter of the same name.
			c, err = newPackBitsV3(e.Config)
			if err != nil && !errors.Is(err, ErrUnsupported) {
				err = fmt.Errorf("codec packbits: %w", err)
			}
		} else {
			c, err = New(e.Name, e.Config)
		}
		if err != nil {
			if errors.Is(err, ErrUnsupported) && !e.MustUnderstand {
				continue
			}
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// ParseCodecList parses a v3 "codecs" list (ParseCodecs) and builds its
// codecs (NewCodecs).
func ParseCodecList(raw json.RawMessage) ([]Codec, error) {
	exts, err := ParseCodecs("codecs", raw)
	if err != nil {
		return nil, err
	}
	return NewCodecs(exts)
}

// jsonText returns raw as compact JSON text for messages, shortened to
// 200 bytes.
func jsonText(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		b.Reset()
		b.Write(raw)
	}
	if b.Len() > 200 {
		return b.String()[:200] + "…"
	}
	return b.String()
}
