package view_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"log"
	"math"
	"os"

	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
)

// Example lists the tree every front end shows (the mount, WebDAV, NFS)
// over a small in-memory Zarr v2 hierarchy: each node's directory with its
// files and their sizes, known without decoding a chunk, and the ENVI
// header that lets GDAL read the array's data.
func Example() {
	ctx := context.Background()
	st := memory.New() // or dir.Open(path, dir.Options{}) for a directory
	if err := zarr.CreateGroup(ctx, st, "", zarr.GroupMeta{Format: zarr.FormatV2,
		Attributes: map[string]any{"title": "a small example"}}); err != nil {
		log.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, "t", zarr.ArrayMeta{Format: zarr.FormatV2,
		Shape: []int64{2, 3}, ChunkShape: []int64{2, 3}, DataType: "<f4", FillValue: math.NaN(),
		Attributes: map[string]any{"_ARRAY_DIMENSIONS": []string{"y", "x"}, "units": "K"}})
	if err != nil {
		log.Fatal(err)
	}
	var data []byte
	for _, v := range []float32{270, 271, 272, 273, 274, 275} {
		data = binary.LittleEndian.AppendUint32(data, math.Float32bits(v))
	}
	if _, err := a.WriteAt(ctx, data, 0); err != nil {
		log.Fatal(err)
	}

	h, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		log.Fatal(err)
	}
	snap := view.NewSnapshot(h, 0, view.Config{})
	var list func(n *zarr.Node, indent string)
	list = func(n *zarr.Node, indent string) {
		l, err := snap.List(ctx, n)
		if err != nil {
			log.Fatal(err)
		}
		for _, e := range l.Entries {
			if e.Child != nil {
				fmt.Printf("%s%s/\n", indent, e.Name)
				list(e.Child, indent+"  ")
				continue
			}
			size, err := e.File.Size(ctx)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Printf("%s%s %d\n", indent, e.Name, size)
		}
	}
	root, err := h.Node(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	list(root, "")

	node, err := h.Node(ctx, "t")
	if err != nil {
		log.Fatal(err)
	}
	l, err := snap.List(ctx, node)
	if err != nil {
		log.Fatal(err)
	}
	if err := view.Copy(ctx, os.Stdout, view.Find(files(l), "data.hdr")); err != nil {
		log.Fatal(err)
	}
	// Output:
	// .zgroup 24
	// .zattrs 34
	// dataset.nc 208
	// info.txt 150
	// t/
	//   .zarray 251
	//   .zattrs 79
	//   data 24
	//   data.npy 152
	//   data.hdr 196
	//   data.npy.hdr 198
	//   data.nhdr 199
	//   info.txt 263
	// ENVI
	// description = {zarrfs: /t}
	// samples = 3
	// lines = 2
	// bands = 1
	// header offset = 0
	// file type = ENVI Standard
	// data type = 4
	// interleave = bsq
	// byte order = 0
	// data ignore value = nan
	// band names = {/t}
}

// files returns the files of a listing.
func files(l view.Listing) []view.File {
	var fs []view.File
	for _, e := range l.Entries {
		if e.File != nil {
			fs = append(fs, e.File)
		}
	}
	return fs
}
