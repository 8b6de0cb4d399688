package codec_test

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log"

	"github.com/zarrfs/zarrfs/codec"
)

// Example decodes one chunk of a Zarr v3 array through the pipeline its
// metadata's "codecs" list describes: a 2×3 chunk of int16, stored
// big-endian and gzip-compressed (here by the standard library's gzip,
// as another writer would have stored it).
func Example() {
	// The "codecs" member of the array's zarr.json.
	codecs := json.RawMessage(`[
		{"name": "bytes", "configuration": {"endian": "big"}},
		{"name": "gzip", "configuration": {"level": 5}}
	]`)
	cs, err := codec.ParseCodecList(codecs)
	if err != nil {
		log.Fatal(err)
	}
	spec := codec.ArraySpec{
		Shape:     []int{2, 3}, // the chunk shape
		DataType:  codec.DataType{Name: "int16", Size: 2},
		FillValue: []byte{0, 0},
	}
	p, err := codec.NewPipeline(cs, spec)
	if err != nil {
		log.Fatal(err)
	}

	// The stored chunk: six big-endian int16, gzip-compressed.
	var raw bytes.Buffer
	binary.Write(&raw, binary.BigEndian, []int16{1, -2, 300, 4, 5, -600})
	var stored bytes.Buffer
	zw := gzip.NewWriter(&stored)
	zw.Write(raw.Bytes())
	zw.Close()

	// Decoded chunks are little-endian, C order.
	chunk, err := p.Decode(stored.Bytes())
	if err != nil {
		log.Fatal(err)
	}
	values := make([]int16, 6)
	binary.Decode(chunk, binary.LittleEndian, values)
	fmt.Println(len(chunk), "bytes:", values)

	// Corrupt input fails with a *codec.CorruptError, which matches
	// codec.ErrCorrupt and names the codec.
	_, err = p.Decode(stored.Bytes()[:10])
	var ce *codec.CorruptError
	fmt.Println(errors.Is(err, codec.ErrCorrupt), errors.As(err, &ce) && ce.Codec == "gzip")
	// Output:
	// 12 bytes: [1 -2 300 4 5 -600]
	// true true
}
