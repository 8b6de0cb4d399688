package main

import (
	"bufio"
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/pflag"

	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
)

// exportFiles names the file of a node's directory each export format
// writes.
var exportFiles = map[string]string{
	"nc":   "dataset.nc",
	"hdr":  "data.hdr",
	"nhdr": "data.nhdr",
	"npy":  "data.npy",
}

func exportFormats() string {
	var fs []string
	for f := range exportFiles {
		fs = append(fs, f)
	}
	sort.Strings(fs)
	return strings.Join(fs, "|")
}

var exportCommand = command{
	name: "export", args: "--format FORMAT STORE PATH", nargs: [2]int{2, 2},
	short: "a node as a NetCDF, ENVI, NRRD or .npy file, to standard output",
	summary: "Write to standard output the bytes of one file of the mount, without mounting:\n" +
		"  nc    MOUNT/PATH/dataset.nc  a group's arrays as a NetCDF classic file\n" +
		"  hdr   MOUNT/PATH/data.hdr    an array's ENVI header (for its data: zarrfs cat)\n" +
		"  nhdr  MOUNT/PATH/data.nhdr   an array's detached NRRD header\n" +
		"  npy   MOUNT/PATH/data.npy    an array as a NumPy .npy file\n" +
		"The file is streamed: memory stays bounded by the chunk cache, whatever its size.",
	flags: func(fl *pflag.FlagSet) func(context.Context, *env, []string) error {
		format := fl.String("format", "", "the file to write: "+exportFormats())
		sf := storeFlagsFor(fl)
		return func(ctx context.Context, e *env, args []string) error {
			name, ok := exportFiles[*format]
			if !ok {
				return fmt.Errorf("--format %q: want one of %s", *format, exportFormats())
			}
			o, n, err := openNode(ctx, args[0], sf, args[1])
			if err != nil {
				return err
			}
			defer o.close()
			var children []*zarr.Node
			if n.Kind == zarr.KindGroup {
				if children, err = o.h.Children(ctx, n.Path); err != nil {
					return o.errorf(args[1], err)
				}
			}
			f := view.Find(view.New(o.h, view.Config{}).Files(n, children), name)
			if f == nil {
				return o.errorf(args[1], fmt.Errorf("has no %s (%s)", name, exportWhy(*format, n)))
			}
			bw := bufio.NewWriterSize(e.stdout, 1<<20)
			if err := view.Copy(ctx, bw, f); err != nil {
				return o.errorf(args[1], err)
			}
			if err := bw.Flush(); err != nil {
				return o.errorf(args[1], fmt.Errorf("write: %w", err))
			}
			return nil
		}
	},
}

// exportWhy says why node n has no file for format.
func exportWhy(format string, n *zarr.Node) string {
	switch {
	case format == "nc" && n.Kind != zarr.KindGroup:
		return "dataset.nc belongs to groups; export the array's group"
	case format == "nc":
		return "the group has no array of a NetCDF type: see zarrfs info"
	case n.Kind != zarr.KindArray:
		return "is a group, not an array"
	}
	return "its data type has no counterpart in that format"
}
