package meta

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/zarrfs/zarrfs/codec"
)

// v2 document names.
const (
	V2ArrayDoc     = ".zarray"
	V2GroupDoc     = ".zgroup"
	V2AttrsDoc     = ".zattrs"
	V2Consolidated = ".zmetadata"
)

// checkZarrFormat checks the zarr_format member of a document.
func checkZarrFormat(name string, obj members, want int) error {
	raw, ok := obj.lookup("zarr_format")
	if !ok {
		return fmt.Errorf("%w: %s has no zarr_format", ErrInvalidMetadata, name)
	}
	// The member must be the number itself: json.Number would also take
	// the string "2".
	if string(bytes.TrimSpace(raw)) != strconv.Itoa(want) {
		return fmt.Errorf("%w: %s has zarr_format %s, want %d", ErrInvalidMetadata, name, compact(raw), want)
	}
	return nil
}

// ParseV2Group checks a .zgroup document.
func ParseV2Group(doc []byte) error {
	obj, err := decodeMembers(V2GroupDoc, doc)
	if err != nil {
		return err
	}
	return checkZarrFormat(V2GroupDoc, obj, 2)
}

// ParseAttributes checks that doc (a .zattrs document, or the attributes
// of another format's document) is a JSON object, and returns it as JSON
// that any reader takes: bare NaN and Infinity turned as pyjson.Turn turns
// them.
func ParseAttributes(name string, doc []byte) (json.RawMessage, error) {
	_, doc, err := decodeObject(name, doc, false)
	if err != nil {
		return nil, err
	}
	return json.RawMessage(doc), nil
}

// dimensionNamesFromAttrs returns the xarray _ARRAY_DIMENSIONS attribute
// when it is a list of strings.
func dimensionNamesFromAttrs(attrs json.RawMessage, rank int) []string {
	if len(attrs) == 0 || rank == 0 {
		return nil
	}
	if dims, ok := plainArrayDimensions(attrs, rank); ok {
		return dims
	}
	return dimensionNamesSlowly(attrs, rank)
}

// dimensionNamesSlowly is dimensionNamesFromAttrs with encoding/json.
func dimensionNamesSlowly(attrs json.RawMessage, rank int) []string {
	var obj struct {
		Dims []string `json:"_ARRAY_DIMENSIONS"`
	}
	if json.Unmarshal(attrs, &obj) != nil || len(obj.Dims) != rank || rank == 0 {
		return nil
	}
	return obj.Dims
}

// ParseV2Array parses a .zarray document. An error (matching
// ErrInvalidMetadata) means the node is unusable; an unsupported data type
// or codec gives an Array with its Unsupported error set instead.
func ParseV2Array(doc []byte, attrs json.RawMessage) (*Array, error) {
	obj, shape, chunks, order, err := parseArrayDoc(V2ArrayDoc, doc, 2)
	if err != nil {
		return nil, err
	}
	sep, err := parseSeparator("dimension_separator", obj.get("dimension_separator"), ".")
	if err != nil {
		return nil, err
	}
	var filters []v2Codec
	if raw := obj.get("filters"); raw != nil && string(raw) != "null" {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%w: filters %s is not a list", ErrInvalidMetadata, compact(raw))
		}
		for i, r := range list {
			c, err := parseV2Codec(fmt.Sprintf("filters[%d]", i), r)
			if err != nil {
				return nil, err
			}
			filters = append(filters, c)
		}
	}
	var compressor *v2Codec
	if raw := obj.get("compressor"); raw != nil && string(raw) != "null" {
		c, err := parseV2Codec("compressor", raw)
		if err != nil {
			return nil, err
		}
		compressor = &c
	}
	codecsJSON, err := v2ChainJSON(filters, compressor)
	if err != nil {
		return nil, err
	}
	fillRaw := rawFillValue(obj)
	a := &Array{
		format:    FormatV2,
		shape:     shape,
		chunks:    chunks,
		fillValue: fillRaw,
		codecs:    codecsJSON,
		dimNames:  dimensionNamesFromAttrs(attrs, len(shape)),
		keys:      chunkKeys{sep: sep},
	}
	dt, err := parseV2DataType(obj.get("dtype"))
	if err != nil {
		return a.typeError(obj.get("dtype"), err)
	}
	var objectCodec *v2Codec
	if dt.kind == 'O' {
		for i := range filters {
			if t, ok := vlenType(filters[i].id); ok {
				dt, objectCodec = t, &filters[i]
				break
			}
		}
		if objectCodec == nil && len(filters) > 0 && filters[0].id == "categorize" {
			// numcodecs' Categorize turns the objects into integers
			// itself, with no object codec (zarr-python 2 reads such
			// arrays): its decoding is the vlen layout of strings, which
			// v2Chain's array→bytes codec checks against the chunk's
			// element count.
			if err := objectCategorize(filters[0].cfg); err != nil {
				a.dataType = DataType{Name: "string"}
				a.err = err
				return a, nil
			}
			dt, _ = vlenType("vlen-utf8")
			objectCodec = &v2Codec{id: "categorize"} // not filters[0], which stays a filter
		}
		if objectCodec == nil {
			a.dataType = DataType{Name: "object"}
			id := "none"
			if len(filters) > 0 {
				id = filters[0].id
			}
			a.err = codec.Unsupportedf("object data type with object codec %q (only vlen-utf8 and vlen-bytes)", id)
			return a, nil
		}
	}
	return a.finish(dt, fillRaw, FormatV2, func() ([]codec.Codec, error) {
		return v2Chain(dt, len(shape), order, filters, objectCodec, compressor)
	})
}

// objectCategorize checks the configuration of a categorize filter that
// serialises an object array: its dtype must be objects, its labels
// strings and its astype an integer type (newCategorize checks the last
// two), else the array is unsupported.
func objectCategorize(cfg codec.Config) error {
	c, err := codec.New("categorize", cfg)
	if err != nil {
		return err
	}
	if cat, ok := c.(codec.Categorize); !ok || cat.DType.Kind != 'O' {
		return codec.Unsupportedf("categorize filter of an object array with dtype %s (only |O)", cat.DType)
	}
	return nil
}

// parseArrayDoc parses the members a v1 meta and a v2 .zarray document
// share: zarr_format (which must be version), shape, chunks and order
// ("C" when absent or null).
func parseArrayDoc(name string, doc []byte, version int) (obj members, shape, chunks []int64, order string, err error) {
	if obj, err = decodeMembers(name, doc); err != nil {
		return members{}, nil, nil, "", err
	}
	if err := checkZarrFormat(name, obj, version); err != nil {
		return members{}, nil, nil, "", err
	}
	if shape, chunks, err = parseShapeAndChunks(obj); err != nil {
		return members{}, nil, nil, "", err
	}
	order = "C"
	if raw, ok := obj.lookup("order"); ok && string(raw) != "null" {
		if s, ok := plainString(raw); ok && (s == "C" || s == "F") {
			return obj, shape, chunks, s, nil
		}
		if err := json.Unmarshal(raw, &order); err != nil || order != "C" && order != "F" {
			return members{}, nil, nil, "", fmt.Errorf("%w: order %s must be \"C\" or \"F\"", ErrInvalidMetadata, compact(raw))
		}
	}
	return obj, shape, chunks, order, nil
}

// v2Chain returns the codec chain of a v2 array: [transpose for order F]
// and bytes (or the object codec), then the filters and the compressor.
func v2Chain(dt dtype, rank int, order string, filters []v2Codec, objectCodec, compressor *v2Codec) ([]codec.Codec, error) {
	head := make([]codec.Codec, 0, len(filters)+3) // then a2b and tail
	var tailBuf [4]codec.Codec
	tail := tailBuf[:0]
	var a2b codec.Codec
	var err error
	if order == "F" && rank > 1 {
		t, err := transposeCodec(rank)
		if err != nil {
			return nil, err
		}
		head = append(head, t)
	}
	switch {
	case objectCodec != nil && objectCodec.id == "categorize":
		// The vlen layout's check, named after the filter whose
		// decoding it checks.
		a2b = codec.Vlen{Codec: "categorize"}
	case objectCodec != nil:
		a2b, err = codec.New(objectCodec.id, objectCodec.cfg)
	default:
		a2b, err = bytesCodec(dt, dt.bigEndian)
	}
	if err != nil {
		return nil, err
	}
	for i := range filters {
		if &filters[i] == objectCodec {
			continue
		}
		c, err := codec.New(filters[i].id, filters[i].cfg)
		if err != nil {
			return nil, err
		}
		switch c.(type) {
		case codec.ArrayToArray:
			head = append(head, c)
		case codec.BytesToBytes:
			tail = append(tail, c)
		default:
			return nil, fmt.Errorf("%w: filter %q cannot follow the %s codec", ErrInvalidMetadata, filters[i].id, a2b.Name())
		}
	}
	if compressor != nil {
		c, err := codec.New(compressor.id, compressor.cfg)
		if err != nil {
			return nil, err
		}
		if b, ok := c.(codec.Blosc); ok {
			c = v2BloscTypeSize(b, compressor.cfg, dt.Size)
		}
		tail = append(tail, c)
	}
	return append(append(head, a2b), tail...), nil
}

// v2BloscTypeSize gives a v2 Blosc compressor the element size numcodecs
// gives it, the item size of the array, unless the metadata names one. It
// matters for encoding only (shuffle works per element; auto-shuffle picks
// bitshuffle for 1-byte items); decoding reads it from each chunk's header.
// Items larger than Blosc's 255-byte limit are shuffled as bytes, as
// c-blosc does.
func v2BloscTypeSize(b codec.Blosc, cfg codec.Config, itemSize int) codec.Blosc {
	if _, set := cfg["typesize"]; set || itemSize < 1 {
		return b
	}
	if itemSize > 255 {
		itemSize = 1
	}
	b.TypeSize = itemSize
	return b
}
