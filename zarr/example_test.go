package zarr_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"log"
	"math"

	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/zarr"
)

// Example_writeArray creates a Zarr v3 group and a gzip-compressed array
// in a store, writes its contents and one region, and reads them back.
func Example_writeArray() {
	ctx := context.Background()
	st := memory.New() // or dir.Open(path, dir.Options{}) for a directory
	if err := zarr.CreateGroup(ctx, st, "", zarr.GroupMeta{Format: zarr.FormatV3}); err != nil {
		log.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, "counts", zarr.ArrayMeta{
		Format: zarr.FormatV3, Shape: []int64{4, 6}, ChunkShape: []int64{2, 3},
		DataType: "uint8", FillValue: 0,
		Codecs: []zarr.CodecSpec{{Name: "bytes"}, {Name: "gzip", Configuration: map[string]any{"level": 5}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	// The whole contents, C order; then a 2×2 box at (1, 2).
	data := make([]byte, a.Size())
	for i := range data {
		data[i] = byte(i)
	}
	if _, err := a.WriteAt(ctx, data, 0); err != nil {
		log.Fatal(err)
	}
	if err := a.WriteRegion(ctx, []int64{1, 2}, []int64{2, 2}, []byte{90, 91, 92, 93}); err != nil {
		log.Fatal(err)
	}
	got := make([]byte, a.Size())
	if _, err := a.ReadAt(ctx, got, 0); err != nil {
		log.Fatal(err)
	}
	for r := range 4 {
		fmt.Println(got[r*6 : r*6+6])
	}
	// Output:
	// [0 1 2 3 4 5]
	// [6 7 90 91 10 11]
	// [12 13 92 93 16 17]
	// [18 19 20 21 22 23]
}

// Example_openStore opens a hierarchy, lists a group's children and
// reads an array's metadata.
func Example_openStore() {
	ctx := context.Background()
	st := exampleStore(ctx)
	h, err := zarr.Open(ctx, st, zarr.Options{})
	if err != nil {
		log.Fatal(err)
	}
	children, err := h.Children(ctx, "")
	if err != nil {
		log.Fatal(err)
	}
	for _, n := range children {
		fmt.Println(n.Path, n.Kind == zarr.KindArray)
	}
	n, err := h.Node(ctx, "temperature")
	if err != nil {
		log.Fatal(err)
	}
	a := n.Array
	fmt.Println(n.Format, a.Shape(), a.ChunkShape(), a.DataType().Name, a.DataType().NumPy, a.Size())
	// Output:
	// temperature true
	// v3 [3 4 5] [1 2 5] float32 <f4 240
}

// Example_readRegion reads a box and a strided plane of an array: only the
// chunks that hold them are fetched and decoded.
func Example_readRegion() {
	ctx := context.Background()
	h, err := zarr.Open(ctx, exampleStore(ctx), zarr.Options{})
	if err != nil {
		log.Fatal(err)
	}
	n, err := h.Node(ctx, "temperature")
	if err != nil {
		log.Fatal(err)
	}
	a := n.Array
	// Elements (1, 2, 1) to (1, 2, 3): three float32, little-endian.
	box := make([]byte, 3*4)
	if err := a.ReadRegion(ctx, []int64{1, 2, 1}, []int64{1, 1, 3}, box); err != nil {
		log.Fatal(err)
	}
	fmt.Println(floats(box))
	// The plane at index 2 of the first dimension, every other row and
	// column.
	plane := make([]byte, 2*3*4)
	if err := a.ReadStrided(ctx, []int64{2, 0, 0}, []int64{1, 2, 3}, []int64{1, 2, 2}, plane); err != nil {
		log.Fatal(err)
	}
	fmt.Println(floats(plane))
	// Output:
	// [121 122 123]
	// [200 202 204 220 222 224]
}

// exampleStore returns a store holding a v3 group with a 3×4×5 float32
// array "temperature" whose element (i, j, k) is 100i + 10j + k.
func exampleStore(ctx context.Context) *memory.Store {
	st := memory.New()
	if err := zarr.CreateGroup(ctx, st, "", zarr.GroupMeta{Format: zarr.FormatV3}); err != nil {
		log.Fatal(err)
	}
	a, err := zarr.CreateArray(ctx, st, "temperature", zarr.ArrayMeta{
		Format: zarr.FormatV3, Shape: []int64{3, 4, 5}, ChunkShape: []int64{1, 2, 5},
		DataType: "float32", FillValue: 0,
	})
	if err != nil {
		log.Fatal(err)
	}
	data := make([]byte, 0, a.Size())
	for i := range 3 {
		for j := range 4 {
			for k := range 5 {
				data = binary.LittleEndian.AppendUint32(data, math.Float32bits(float32(100*i+10*j+k)))
			}
		}
	}
	if _, err := a.WriteAt(ctx, data, 0); err != nil {
		log.Fatal(err)
	}
	return st
}

// floats decodes little-endian float32 elements.
func floats(b []byte) []float32 {
	out := make([]float32, len(b)/4)
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}
