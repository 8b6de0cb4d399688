package zarr

import (
	"github.com/zarrfs/zarrfs/internal/pyjson"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// OrderedAttributes returns the node's user attributes in document order,
// each value as its writer wrote it (see meta.OrderedAttributes: bare NaN
// stays a number, as xarray's _FillValue needs): read from the document
// of the node's format that holds them (v2 .zattrs, v1 attrs, v3
// zarr.json's "attributes"), else from Attributes. The NetCDF and ENVI
// views write them so.
func (n *Node) OrderedAttributes() []pyjson.Field {
	for _, d := range n.Documents {
		var member string
		switch {
		case d.Name == v2AttrsDoc || d.Name == v1AttrsDoc && n.Format == FormatV1:
		case d.Name == v3Doc && n.Format == FormatV3:
			member = "attributes"
		default:
			continue
		}
		if attrs, ok := meta.OrderedAttributes(d.Data, member); ok {
			return attrs
		}
	}
	attrs, _ := meta.OrderedAttributes(n.Attributes, "")
	return attrs
}
