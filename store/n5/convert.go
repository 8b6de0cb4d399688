package n5

import (
	"encoding/json"
	"fmt"
	"slices"
)

// n5Members are the members of attributes.json that describe an N5
// dataset (N5 spec 4.0.0, "attributes.json"); the others are attributes.
var n5Members = []string{"dimensions", "blockSize", "dataType", "compression", "compressionType"}

// n5Types are the N5 data types Zarr v3 has under the same names.
var n5Types = []string{"uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64", "float32", "float64"}

// maxRank bounds the dimensions of an N5 dataset (as Zarr's rank).
const maxRank = 32

// Convert turns the attributes.json of an N5 group or dataset into the
// Zarr v3 document that reads it (package comment). A dataset whose
// dimensions, block size or data type are malformed is an error; a data
// type or compressor Zarr has no equivalent for is kept (named) for the
// Zarr reader to refuse as unsupported.
func Convert(attributes []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(attributes, &m); err != nil || m == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	attrs := map[string]json.RawMessage{}
	for k, v := range m {
		if !slices.Contains(n5Members, k) && k != "n5" {
			attrs[k] = v
		}
	}
	if m["dimensions"] == nil {
		return json.Marshal(map[string]any{"zarr_format": 3, "node_type": "group", "attributes": attrs})
	}
	var shape, block []int64
	if err := json.Unmarshal(m["dimensions"], &shape); err != nil || len(shape) == 0 || len(shape) > maxRank {
		return nil, fmt.Errorf("dimensions %s are not 1 to %d sizes", m["dimensions"], maxRank)
	}
	if err := json.Unmarshal(m["blockSize"], &block); err != nil || len(block) != len(shape) {
		return nil, fmt.Errorf("blockSize %s is not %d sizes", m["blockSize"], len(shape))
	}
	var dtype string
	if err := json.Unmarshal(m["dataType"], &dtype); err != nil {
		return nil, fmt.Errorf("dataType %s is not a string", m["dataType"])
	}
	compressor, err := compressorOf(m, dtype)
	if err != nil {
		return nil, err
	}
	order := make([]int, len(shape))
	for i := range order {
		order[i] = len(shape) - 1 - i
	}
	inner := []any{
		map[string]any{"name": "transpose", "configuration": map[string]any{"order": order}},
		map[string]any{"name": "bytes", "configuration": map[string]any{"endian": "big"}},
	}
	if compressor != nil {
		inner = append(inner, compressor)
	}
	return json.Marshal(map[string]any{
		"zarr_format": 3,
		"node_type":   "array",
		"shape":       shape,
		"data_type":   dtype,
		"chunk_grid":  map[string]any{"name": "regular", "configuration": map[string]any{"chunk_shape": block}},
		// N5's block paths: the grid position in N5's order, "/"-separated
		// ("Zarr arrays reading N5 data MUST use a /-separated v2 chunk
		// key encoding").
		"chunk_key_encoding": map[string]any{"name": "v2", "configuration": map[string]any{"separator": "/"}},
		"fill_value":         0, // "Conventionally they use 0 for numeric data"
		"codecs":             []any{map[string]any{"name": "n5_default", "configuration": map[string]any{"codecs": inner}}},
		"attributes":         attrs,
	})
}

// compressorOf returns the Zarr codec of the dataset's compression (nil
// for raw): "compression" {"type": …} (N5 ≥ 1.0) or "compressionType"
// (older containers, default parameters).
func compressorOf(m map[string]json.RawMessage, dtype string) (any, error) {
	var c map[string]json.RawMessage
	if raw := m["compression"]; raw != nil {
		if err := json.Unmarshal(raw, &c); err != nil || c == nil {
			return nil, fmt.Errorf("compression %s is not an object", raw)
		}
	} else {
		c = map[string]json.RawMessage{"type": m["compressionType"]}
		if c["type"] == nil {
			c["type"] = json.RawMessage(`"raw"`) // neither: uncompressed
		}
	}
	var typ string
	if err := json.Unmarshal(c["type"], &typ); err != nil {
		return nil, fmt.Errorf("compression type %s is not a string", c["type"])
	}
	num := func(key string, def int) int {
		var v int
		if json.Unmarshal(c[key], &v) != nil {
			return def
		}
		return v
	}
	level := func(def int) int {
		if l := num("level", def); l >= 0 && l <= 9 {
			return l
		}
		return def // N5's -1 (the library's default); decoding does not depend on it
	}
	codec := func(name string, cfg map[string]any) any {
		return map[string]any{"name": name, "configuration": cfg}
	}
	switch typ {
	case "raw":
		return nil, nil
	case "gzip":
		var zlib bool
		json.Unmarshal(c["useZlib"], &zlib)
		if zlib {
			return codec("numcodecs.zlib", map[string]any{"level": level(6)}), nil
		}
		return codec("gzip", map[string]any{"level": level(6)}), nil
	case "bzip2":
		return codec("numcodecs.bz2", map[string]any{"level": min(max(num("blockSize", 9), 1), 9)}), nil
	case "xz":
		preset := num("preset", 6)
		if preset < 0 || preset > 9 {
			preset = 6
		}
		return codec("numcodecs.lzma", map[string]any{"format": 1, "preset": preset}), nil
	case "zstd":
		return codec("zstd", map[string]any{"level": num("level", 3), "checksum": false}), nil
	case "blosc":
		var cname string
		json.Unmarshal(c["cname"], &cname)
		size := 1
		if i := slices.Index(n5Types, dtype); i >= 0 {
			size = []int{1, 2, 4, 8, 1, 2, 4, 8, 4, 8}[i]
		}
		return codec("blosc", map[string]any{"cname": cname, "clevel": num("clevel", 5), "shuffle": num("shuffle", 1),
			"typesize": size, "blocksize": num("blocksize", 0)}), nil
	}
	// lz4 (N5's LZ4 block framing, not numcodecs'), jpeg, and any other:
	// a codec name no reader has, so the data is unsupported.
	return codec("n5."+typ, map[string]any{}), nil
}
