package meta

import (
	"encoding/json"
	"fmt"

	"github.com/zarrfs/zarrfs/codec"
)

// v1 document names: a v1 store is one array whose configuration is in
// "meta" and whose user attributes are in "attrs", both at the root.
const (
	V1MetaDoc  = "meta"
	V1AttrsDoc = "attrs"
)

// v1Compressors maps the v1 "compression" names to registered codecs.
// "none" (or null) means the chunks are stored uncompressed.
var v1Compressors = map[string]string{
	"blosc": "blosc",
	"zlib":  "zlib",
	"bz2":   "bz2",
	"lzma":  "lzma",
}

// ParseV1Array parses a v1 meta document. As with ParseV2Array, an error
// means the node is unusable, while an unsupported data type or
// compression gives an Array with its Unsupported error set.
func ParseV1Array(doc []byte) (*Array, error) {
	obj, shape, chunks, order, err := parseArrayDoc(V1MetaDoc, doc, 1)
	if err != nil {
		return nil, err
	}
	compressor, err := parseV1Compression(obj.get("compression"), obj.get("compression_opts"))
	if err != nil {
		return nil, err
	}
	codecsJSON, err := v2ChainJSON(nil, compressor)
	if err != nil {
		return nil, err
	}
	fillRaw := rawFillValue(obj)
	a := &Array{format: FormatV1, shape: shape, chunks: chunks, fillValue: fillRaw, codecs: codecsJSON, keys: chunkKeys{sep: "."}}
	dt, err := parseV2DataType(obj.get("dtype"))
	if err == nil && dt.kind == 'O' {
		err = codec.Unsupportedf("object data type in a v1 array")
	}
	if err != nil {
		return a.typeError(obj.get("dtype"), err)
	}
	return a.finish(dt, fillRaw, FormatV2, func() ([]codec.Codec, error) {
		return v2Chain(dt, len(shape), order, nil, nil, compressor)
	})
}

// parseV1Compression turns the v1 compression and compression_opts members
// into the equivalent numcodecs codec; nil means no compression. Missing
// options take zarr 1's defaults (blosc: blosclz, level 5, byte shuffle;
// zlib and bz2: level 1).
func parseV1Compression(nameRaw, optsRaw json.RawMessage) (*v2Codec, error) {
	name := "none"
	if nameRaw != nil && string(nameRaw) != "null" {
		if err := json.Unmarshal(nameRaw, &name); err != nil {
			return nil, fmt.Errorf("%w: compression %s is not a string", ErrInvalidMetadata, compact(nameRaw))
		}
	}
	if name == "none" {
		return nil, nil
	}
	id, ok := v1Compressors[name]
	if !ok {
		return &v2Codec{id: name, cfg: codec.Config{}}, nil // unsupported when the pipeline is built
	}
	hasOpts := optsRaw != nil && string(optsRaw) != "null"
	cfg := codec.Config{}
	switch name {
	case "blosc":
		cfg["cname"], cfg["clevel"], cfg["shuffle"] = json.RawMessage(`"blosclz"`), json.RawMessage("5"), json.RawMessage("1")
		if hasOpts {
			var opts codec.Config
			if err := json.Unmarshal(optsRaw, &opts); err != nil || opts == nil {
				return nil, fmt.Errorf("%w: compression_opts %s of blosc is not an object", ErrInvalidMetadata, compact(optsRaw))
			}
			for k, v := range opts {
				cfg[k] = v
			}
		}
	case "zlib", "bz2":
		cfg["level"] = json.RawMessage("1")
		if hasOpts {
			var level int
			if err := json.Unmarshal(optsRaw, &level); err != nil {
				return nil, fmt.Errorf("%w: compression_opts %s of %s is not a level", ErrInvalidMetadata, compact(optsRaw), name)
			}
			cfg["level"] = optsRaw
		}
	case "lzma":
		if hasOpts {
			if err := json.Unmarshal(optsRaw, &cfg); err != nil || cfg == nil {
				return nil, fmt.Errorf("%w: compression_opts %s of lzma is not an object", ErrInvalidMetadata, compact(optsRaw))
			}
		}
	}
	return &v2Codec{id: id, cfg: cfg}, nil
}
