package view

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/zarr"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// Xattr is one extended attribute of a node's directory or data file.
type Xattr struct {
	Name  string
	Value []byte
}

// XattrPrefix begins the name of every extended attribute zarrfs shows.
const XattrPrefix = "user.zarr."

// Xattrs returns the extended attributes of node n's directory, sorted by
// name: an array's (ArrayXattrs), or a group's format. The data files of
// an array carry the array's too.
func Xattrs(n *zarr.Node) []Xattr {
	if n.Array != nil { // also a draft root that is a group and an array
		return ArrayXattrs(n.Array.Meta())
	}
	return []Xattr{{"user.zarr.format", []byte(formatName(n.Format))}}
}

// formatName is the value of user.zarr.format: the zarr_format number, or
// for the v3 drafts the number and the draft's year.
func formatName(f zarr.Format) string {
	switch f {
	case zarr.FormatV1:
		return "1"
	case zarr.FormatV2:
		return "2"
	case zarr.FormatV3:
		return "3"
	case zarr.FormatV3Draft2019:
		return "3-draft-2019"
	case zarr.FormatV3Draft2022:
		return "3-draft-2022"
	default:
		return "unknown"
	}
}

// ArrayXattrs returns the extended attributes of an array directory and of
// its data files (README.md, The layout): shape and chunks as comma-separated
// lengths ("100,200"; empty for a 0-d array), dtype as the NumPy type
// string of `data` (the v3 name for variable-length types, which have no
// NumPy type), fill_value and codecs as compact JSON, dimension_names
// comma-separated (absent when the array has none) and format.
func ArrayXattrs(a *meta.Array) []Xattr {
	dtype := a.DataType().NumPy
	if dtype == "" {
		dtype = a.DataType().Name
	}
	x := []Xattr{
		{"user.zarr.chunks", []byte(joinInts(a.ChunkShape()))},
		{"user.zarr.codecs", compactJSON(a.Codecs())},
	}
	if names := a.DimensionNames(); names != nil {
		x = append(x, Xattr{"user.zarr.dimension_names", []byte(strings.Join(names, ","))})
	}
	return append(x,
		Xattr{"user.zarr.dtype", []byte(dtype)},
		Xattr{"user.zarr.fill_value", compactJSON(a.FillValue())},
		Xattr{"user.zarr.format", []byte(formatName(a.Format()))},
		Xattr{"user.zarr.shape", []byte(joinInts(a.Shape()))},
	)
}

// joinInts formats lengths as "100,200".
func joinInts(v []int64) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.FormatInt(n, 10)
	}
	return strings.Join(s, ",")
}

// compactJSON returns raw without insignificant space, "null" when empty,
// and raw unchanged when it is not valid JSON.
func compactJSON(raw json.RawMessage) []byte {
	if len(raw) == 0 {
		return []byte("null")
	}
	var b bytes.Buffer
	if err := json.Compact(&b, raw); err != nil {
		return raw
	}
	return b.Bytes()
}
