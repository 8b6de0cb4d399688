package zarr

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Info summarises a node for `zarrfs info` (as JSON or as Text) and
// info.txt in the mount.
type Info struct {
	Path   string `json:"path"`   // "/" for the root, "/a/b" otherwise
	Kind   string `json:"kind"`   // "group", "array" or "unknown"
	Format string `json:"format"` // "v2", "v3" …
	// Shape and Chunks are null for groups and for arrays whose metadata
	// is broken, [] for 0-d arrays.
	Shape  []int64 `json:"shape"`
	Chunks []int64 `json:"chunks"`
	// DataType is the data type as the metadata names it ("<f4", "float32").
	DataType string `json:"dtype,omitempty"`
	// NumPy is the NumPy type string of the logical content ("<f4").
	NumPy          string          `json:"numpy_dtype,omitempty"`
	Codecs         json.RawMessage `json:"codecs,omitempty"`
	FillValue      json.RawMessage `json:"fill_value,omitempty"`
	DimensionNames []string        `json:"dimension_names,omitempty"`
	Attributes     json.RawMessage `json:"attributes,omitempty"`
	Error          string          `json:"error,omitempty"`
	// Notes say how zarrfs reads what other tools write outside the
	// specification (GDAL's v3 arrays without codecs …).
	Notes []string `json:"notes,omitempty"`
}

// Info returns the node's summary.
func (n *Node) Info() Info {
	i := Info{Path: "/" + n.Path, Kind: n.Kind.String(), Format: n.Format.String(), Attributes: compactJSON(n.Attributes)}
	if a := n.Array; a != nil {
		i.Shape, i.Chunks = a.Shape(), a.ChunkShape()
		i.DataType = a.Spelling()
		if i.DataType == "" {
			i.DataType = a.DataType().Name
		}
		i.NumPy = a.DataType().NumPy
		i.Codecs = compactJSON(a.Codecs())
		i.FillValue = compactJSON(a.FillValue())
		i.DimensionNames = a.DimensionNames()
		if a.Err != nil {
			i.Error = a.Err.Error()
		}
		if note := a.Note(); note != "" {
			i.Notes = append(i.Notes, note)
		}
	}
	if n.Note != "" {
		i.Notes = append(i.Notes, n.Note)
	}
	if n.Err != nil {
		i.Error = n.Err.Error()
	}
	return i
}

func compactJSON(raw json.RawMessage) json.RawMessage {
	if len(raw) == 0 {
		return nil
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return nil
	}
	return b.Bytes()
}

// Text returns the human-readable summary, one "name: value" line each.
func (i Info) Text() string {
	var b strings.Builder
	b.Grow(256)
	line := func(k, v string) { // "%-16s %s\n" of k+":" and v
		b.WriteString(k)
		b.WriteByte(':')
		for i := len(k) + 1; i < 16; i++ {
			b.WriteByte(' ')
		}
		b.WriteByte(' ')
		b.WriteString(v)
		b.WriteByte('\n')
	}
	line("path", i.Path)
	line("kind", i.Kind)
	line("format", "zarr "+i.Format)
	if i.Shape != nil {
		line("shape", ShapeText(i.Shape))
		if i.Chunks != nil { // nil for a chunk grid zarrfs cannot read
			line("chunks", ShapeText(i.Chunks))
		}
		dt := i.DataType
		if i.NumPy != "" && i.NumPy != dt {
			dt += " (data: " + i.NumPy + ")"
		}
		line("dtype", dt)
		if len(i.Codecs) > 0 {
			line("codecs", string(i.Codecs))
		}
		if len(i.FillValue) > 0 {
			line("fill_value", string(i.FillValue))
		}
		if len(i.DimensionNames) > 0 {
			line("dimension_names", strings.Join(i.DimensionNames, ", "))
		}
	}
	if a := string(i.Attributes); a != "" && a != "{}" {
		line("attributes", a)
	}
	for _, note := range i.Notes {
		line("note", note)
	}
	if i.Error != "" {
		line("error", i.Error)
	}
	return b.String()
}

// ShapeText formats a shape as info.txt does: "100 × 200" ("()" for rank
// 0).
func ShapeText(d []int64) string {
	if len(d) == 0 {
		return "()"
	}
	s := make([]string, len(d))
	for i, x := range d {
		s[i] = strconv.FormatInt(x, 10)
	}
	return strings.Join(s, " × ")
}
