package zarr

import "encoding/json"

// Info summarises a node for `zarrfs info`, info.txt and xattrs.
type Info struct {
	Path           string          `json:"path"`
	Kind           string          `json:"kind"`
	Format         string          `json:"format"`
	Shape          []int64         `json:"shape,omitempty"`
	Chunks         []int64         `json:"chunks,omitempty"`
	DataType       string          `json:"dtype,omitempty"`
	Codecs         json.RawMessage `json:"codecs,omitempty"`
	FillValue      json.RawMessage `json:"fill_value,omitempty"`
	DimensionNames []string        `json:"dimension_names,omitempty"`
	Attributes     json.RawMessage `json:"attributes,omitempty"`
	Error          string          `json:"error,omitempty"`
}

// Info returns the node's summary.
func (n *Node) Info() Info { return Info{Path: n.Path} }

// Text returns the human-readable summary.
func (i Info) Text() string { return "" }
