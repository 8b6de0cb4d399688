package view

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/zarr"
)

// This file makes data.nhdr, the detached NRRD header (teem's format,
// http://teem.sourceforge.net/nrrd/format.html) that lets teem's unu,
// Fiji, 3D Slicer, ParaView and ITK open an array's `data` as a volume.
// NRRD lists sizes fastest axis first, so the C-order shape is reversed,
// and so are the dimension names, its labels.

// nrrdHeader returns the detached NRRD header of an array's data, whose
// elements are of NRRD type typ. A rank-0 array is one element along one
// axis (NRRD has at least one).
func nrrdHeader(a *zarr.Array, typ string) []byte {
	shape := a.Shape()
	if len(shape) == 0 {
		shape = []int64{1}
	}
	var b strings.Builder
	b.WriteString("NRRD0004\n")
	b.WriteString("# Complete NRRD file format specification at:\n")
	b.WriteString("# http://teem.sourceforge.net/nrrd/format.html\n")
	fmt.Fprintf(&b, "type: %s\n", typ)
	fmt.Fprintf(&b, "dimension: %d\n", len(shape))
	sizes := make([]string, len(shape))
	for i, n := range shape {
		sizes[len(shape)-1-i] = strconv.FormatInt(n, 10)
	}
	fmt.Fprintf(&b, "sizes: %s\n", strings.Join(sizes, " "))
	b.WriteString("endian: little\nencoding: raw\n")
	if len(a.DimensionNames()) == len(a.Shape()) && len(a.Shape()) > 0 {
		labels := make([]string, len(shape))
		for i, name := range a.DimensionNames() {
			labels[len(shape)-1-i] = nrrdQuote(name)
		}
		fmt.Fprintf(&b, "labels: %s\n", strings.Join(labels, " "))
	}
	b.WriteString("data file: data\n")
	return []byte(b.String())
}

// nrrdQuote quotes a label as NRRD's per-axis string fields are: in double
// quotes, a double quote escaped with a backslash; line breaks, which would
// end the field, become spaces.
func nrrdQuote(s string) string {
	s = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", " ", "\r", " ").Replace(s)
	return `"` + s + `"`
}

// headerFiles returns the raster and volume headers of array node n's
// data: data.hdr and data.nhdr, each where its format has the element type.
func headerFiles(h *zarr.Hierarchy, n *zarr.Node) []File {
	a := n.Array
	if a == nil || a.Err != nil || !hasElements(a) {
		return nil
	}
	t, ok := parseNumPy(a.DataType().NumPy)
	if !ok {
		return nil
	}
	var fs []File
	codes := t.codes()
	if codes.envi != 0 {
		fs = append(fs, newEnviFile(h, n, t))
	}
	if codes.nrrd != "" {
		fs = append(fs, &bytesFile{name: "data.nhdr", data: nrrdHeader(a, codes.nrrd)})
	}
	return fs
}
