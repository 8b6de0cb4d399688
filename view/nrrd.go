package view

import (
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
	b := make([]byte, 0, 256)
	b = append(b, "NRRD0004\n"+
		"# Complete NRRD file format specification at:\n"+
		"# http://teem.sourceforge.net/nrrd/format.html\n"+
		"type: "...)
	b = append(b, typ...)
	b = append(b, "\ndimension: "...)
	b = strconv.AppendInt(b, int64(len(shape)), 10)
	b = append(b, "\nsizes:"...)
	for i := range shape {
		b = append(b, ' ')
		b = strconv.AppendInt(b, shape[len(shape)-1-i], 10)
	}
	b = append(b, "\nendian: little\nencoding: raw\n"...)
	if len(a.DimensionNames()) == len(a.Shape()) && len(a.Shape()) > 0 {
		labels := make([]string, len(shape))
		for i, name := range a.DimensionNames() {
			labels[len(shape)-1-i] = nrrdQuote(name)
		}
		b = append(b, "labels: "+strings.Join(labels, " ")+"\n"...)
	}
	return append(b, "data file: data\n"...)
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
	t, ok := elemOf(a.DataType())
	if !ok {
		return nil
	}
	var fs []File
	codes := t.codes()
	if codes.envi != 0 {
		hdr := newEnviFile(h, n, t)
		fs = append(fs, hdr, newNpyEnviFile(hdr, len(NpyHeader(a.DataType().NumPy, a.Shape()))))
	}
	if codes.nrrd != "" {
		fs = append(fs, newMetaFile("data.nhdr", func() []byte { return nrrdHeader(a, codes.nrrd) }))
	}
	return fs
}
