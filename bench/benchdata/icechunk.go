package main

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/store/icechunk/icechunktest"
)

// icechunkCopy writes into dst an Icechunk repository (spec 1) holding
// the 2-D Zarr v2 array SRC/arr (float32, zstd, as bench/remote.py's
// zarr-python writes it) as the v3 array arr on branch main: the same
// zstd chunks, byte for byte, each a native chunk file. A numcodecs Zstd
// chunk is one zstd frame, which is what the v3 zstd codec reads.
func icechunkCopy(src, dst string) error {
	raw, err := os.ReadFile(filepath.Join(src, arrayName, ".zarray"))
	if err != nil {
		return err
	}
	var za struct {
		Shape      []uint64       `json:"shape"`
		Chunks     []uint64       `json:"chunks"`
		DType      string         `json:"dtype"`
		Compressor map[string]any `json:"compressor"`
		Fill       any            `json:"fill_value"`
		Order      string         `json:"order"`
		Filters    []any          `json:"filters"`
		Sep        string         `json:"dimension_separator"`
	}
	if err := json.Unmarshal(raw, &za); err != nil {
		return err
	}
	if za.DType != "<f4" || za.Compressor["id"] != "zstd" || len(za.Shape) != 2 || za.Order == "F" || len(za.Filters) > 0 {
		return fmt.Errorf("icechunk: %s/%s is not a C-order <f4 zstd 2-D array", src, arrayName)
	}
	sep := za.Sep
	if sep == "" {
		sep = "."
	}
	fill, _ := json.Marshal(za.Fill)
	meta := fmt.Sprintf(`{"zarr_format":3,"node_type":"array","shape":[%d,%d],"data_type":"float32",`+
		`"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[%d,%d]}},`+
		`"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},"fill_value":%s,`+
		`"codecs":[{"name":"bytes","configuration":{"endian":"little"}},{"name":"zstd","configuration":{"level":%d,"checksum":false}}],`+
		`"attributes":{}}`, za.Shape[0], za.Shape[1], za.Chunks[0], za.Chunks[1], fill, zstdLevel)
	entries, err := os.ReadDir(filepath.Join(src, arrayName))
	if err != nil {
		return err
	}
	var chunks []icechunktest.Chunk
	for _, e := range entries {
		parts := strings.Split(e.Name(), sep)
		if len(parts) != 2 {
			continue // .zarray, .zattrs
		}
		i, err1 := strconv.ParseUint(parts[0], 10, 32)
		j, err2 := strconv.ParseUint(parts[1], 10, 32)
		if err1 != nil || err2 != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(src, arrayName, e.Name()))
		if err != nil {
			return err
		}
		chunks = append(chunks, icechunktest.Chunk{Index: []uint32{uint32(i), uint32(j)}, Data: b})
	}
	if err := os.RemoveAll(dst); err != nil {
		return err
	}
	icechunktest.WriteArray(fataler{}, dst, 1, arrayName, meta, za.Shape, za.Chunks, chunks)
	return nil
}

// fataler stops benchdata on the writer's error.
type fataler struct{}

func (fataler) Helper()                           {}
func (fataler) Fatal(args ...any)                 { log.Fatal(args...) }
func (fataler) Fatalf(format string, args ...any) { log.Fatalf(format, args...) }
