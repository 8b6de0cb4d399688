package view

import (
	"bytes"
	"encoding/json"
	"strings"
	"text/tabwriter"

	"github.com/zarrfs/zarrfs/zarr"
)

// InfoText is the content of a node's info.txt, which `zarrfs info` prints
// too: the engine's summary, ending in a newline, then for a group (or a
// node too broken to tell its kind) its children as listed (nil when the
// store cannot list), one line each: name and kind, and for an array its
// shape, data type and codecs; then for a group the arrays its dataset.nc
// leaves out.
func InfoText(n *zarr.Node, children []*zarr.Node) string {
	var left []string
	if n.Kind == zarr.KindGroup {
		_, left = netcdfVariables(children)
	}
	return string(infoText(n, children, left))
}

// infoText is InfoText, given the arrays a group's dataset.nc leaves out
// (netcdfVariables), which the listing that shows info.txt has made.
func infoText(n *zarr.Node, children []*zarr.Node, left []string) []byte {
	var b bytes.Buffer
	b.WriteString(n.Info().Text())
	if !bytes.HasSuffix(b.Bytes(), []byte("\n")) {
		b.WriteString("\n")
	}
	if n.Kind != zarr.KindArray && len(children) > 0 {
		b.WriteString("children:\n")
		tw := tabwriter.NewWriter(&b, 0, 4, 2, ' ', 0)
		for _, c := range children {
			name := c.Name()
			if c.Kind != zarr.KindArray {
				name += "/"
			}
			line := "  " + name + "\t" + c.Kind.String()
			if a := c.Array; a != nil {
				line += "\t" + zarr.ShapeText(a.Shape()) + "\t" + a.DataType().Name + "\t" + codecNames(a.Codecs())
			}
			tw.Write([]byte(strings.TrimRight(line, "\t") + "\n"))
		}
		tw.Flush()
	}
	if n.Kind == zarr.KindGroup {
		b.WriteString(netcdfInfo(left))
	}
	return b.Bytes()
}

// codecNames lists the names in a codec chain ("bytes,zstd").
func codecNames(raw json.RawMessage) string {
	var chain []struct {
		Name string `json:"name"`
	}
	if json.Unmarshal(raw, &chain) != nil {
		return ""
	}
	names := make([]string, len(chain))
	for i, c := range chain {
		names[i] = c.Name
	}
	return strings.Join(names, ",")
}
