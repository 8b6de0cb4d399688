package fs

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
	"syscall"

	"github.com/zarrfs/zarrfs/zarr"
)

// xattr is one extended attribute.
type xattr struct {
	name  string
	value []byte
}

// xattrs is a node's extended attributes, sorted by name.
type xattrs []xattr

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

// groupXattrs returns the extended attributes of a group directory.
func groupXattrs(f zarr.Format) xattrs {
	return xattrs{{"user.zarr.format", []byte(formatName(f))}}
}

// arrayXattrs returns the extended attributes of an array directory and of
// its data files (DESIGN.md §1): shape and chunks as comma-separated
// lengths ("100,200"; empty for a 0-d array), dtype as the NumPy type
// string of `data` (the v3 name for variable-length types, which have no
// NumPy type), fill_value and codecs as compact JSON, dimension_names
// comma-separated (absent when the array has none) and format.
func arrayXattrs(a *zarr.Array, f zarr.Format) xattrs {
	dtype := a.DataType.NumPy
	if dtype == "" {
		dtype = a.DataType.Name
	}
	x := xattrs{
		{"user.zarr.chunks", []byte(joinInts(a.ChunkShape))},
		{"user.zarr.codecs", compactJSON(a.Codecs)},
	}
	if a.DimensionNames != nil {
		x = append(x, xattr{"user.zarr.dimension_names", []byte(strings.Join(a.DimensionNames, ","))})
	}
	return append(x,
		xattr{"user.zarr.dtype", []byte(dtype)},
		xattr{"user.zarr.fill_value", compactJSON(a.FillValue)},
		xattr{"user.zarr.format", []byte(formatName(f))},
		xattr{"user.zarr.shape", []byte(joinInts(a.Shape))},
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

// xattrPrefix begins the name of every extended attribute zarrfs shows.
const xattrPrefix = "user.zarr."

// ours reports whether name can be one of zarrfs's attributes: the others
// (security.selinux, system.posix_acl_access, which ls -l asks for every
// file) are answered without making the node's attributes.
func ours(name string) bool { return strings.HasPrefix(name, xattrPrefix) }

// get answers getxattr(2): the value of name copied to dest, or its size
// when dest is empty; ERANGE when dest is too small, ENODATA when there is
// no such attribute.
func (x xattrs) get(name string, dest []byte) (uint32, syscall.Errno) {
	for _, a := range x {
		if a.name == name {
			return fill(dest, a.value)
		}
	}
	return 0, syscall.ENODATA
}

// list answers listxattr(2): the NUL-terminated names copied to dest, or
// their size when dest is empty; ERANGE when dest is too small.
func (x xattrs) list(dest []byte) (uint32, syscall.Errno) {
	var names []byte
	for _, a := range x {
		names = append(names, a.name...)
		names = append(names, 0)
	}
	return fill(dest, names)
}

// fill copies v to dest following the xattr size protocol.
func fill(dest, v []byte) (uint32, syscall.Errno) {
	if len(dest) == 0 {
		return uint32(len(v)), 0
	}
	if len(dest) < len(v) {
		return uint32(len(v)), syscall.ERANGE
	}
	return uint32(copy(dest, v)), 0
}
