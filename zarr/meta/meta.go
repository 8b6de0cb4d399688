package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/zarrfs/zarrfs/codec"
)

// parseDims parses a list of non-negative (positive when positive is set)
// integers: a shape or a chunk shape.
func parseDims(what string, raw json.RawMessage, positive bool) ([]int64, error) {
	if raw == nil {
		return nil, fmt.Errorf("%w: %s is missing", ErrInvalidMetadata, what)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(raw, &list); err != nil || list == nil {
		return nil, fmt.Errorf("%w: %s %s is not a list of integers", ErrInvalidMetadata, what, compact(raw))
	}
	if len(list) > MaxRank {
		return nil, fmt.Errorf("%w: %s has %d dimensions, more than %d", ErrInvalidMetadata, what, len(list), MaxRank)
	}
	dims := make([]int64, len(list))
	for i, r := range list {
		n, err := strconv.ParseInt(string(bytes.TrimSpace(r)), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: %s[%d] = %s is not an integer", ErrInvalidMetadata, what, i, compact(r))
		}
		if n < 0 || positive && n == 0 {
			kind := "non-negative"
			if positive {
				kind = "positive"
			}
			return nil, fmt.Errorf("%w: %s[%d] = %d must be %s", ErrInvalidMetadata, what, i, n, kind)
		}
		dims[i] = n
	}
	return dims, nil
}

// parseShapeAndChunks reads the "shape" and "chunks" of a v1 or v2 array
// document, which must have the same rank.
func parseShapeAndChunks(obj map[string]json.RawMessage) (shape, chunks []int64, err error) {
	if shape, err = parseDims("shape", obj["shape"], false); err != nil {
		return nil, nil, err
	}
	if chunks, err = parseDims("chunks", obj["chunks"], true); err != nil {
		return nil, nil, err
	}
	if len(chunks) != len(shape) {
		return nil, nil, fmt.Errorf("%w: chunks %v and shape %v differ in rank", ErrInvalidMetadata, chunks, shape)
	}
	return shape, chunks, nil
}

// v2Codec is a numcodecs codec object {"id": …, …}.
type v2Codec struct {
	id  string
	cfg codec.Config
}

func parseV2Codec(what string, raw json.RawMessage) (v2Codec, error) {
	var obj codec.Config
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return v2Codec{}, fmt.Errorf("%w: %s %s is not an object", ErrInvalidMetadata, what, compact(raw))
	}
	var c v2Codec
	if err := json.Unmarshal(obj["id"], &c.id); err != nil || c.id == "" {
		return v2Codec{}, fmt.Errorf("%w: %s %s has no \"id\"", ErrInvalidMetadata, what, compact(raw))
	}
	delete(obj, "id")
	c.cfg = obj
	return c, nil
}

// CodecJSON is a v3 codec object with its members in the usual order.
type CodecJSON struct {
	Name          string `json:"name"`
	Configuration any    `json:"configuration,omitempty"`
}

// v3JSON returns c in v3 form {"name": …, "configuration": {…}}.
func (c v2Codec) v3JSON() CodecJSON {
	if len(c.cfg) == 0 {
		return CodecJSON{Name: c.id}
	}
	return CodecJSON{Name: c.id, Configuration: c.cfg}
}

// v2ChainJSON returns the codecs of a v1, v2 or draft array, the filters
// then the compressor (nil for none), as the JSON list of their v3 forms
// (Array.Codecs).
func v2ChainJSON(filters []v2Codec, compressor *v2Codec) (json.RawMessage, error) {
	list := make([]CodecJSON, 0, len(filters)+1)
	for _, c := range filters {
		list = append(list, c.v3JSON())
	}
	if compressor != nil {
		list = append(list, compressor.v3JSON())
	}
	b, err := json.Marshal(list)
	if err != nil {
		return nil, fmt.Errorf("%w: codecs: %v", ErrInvalidMetadata, err)
	}
	return b, nil
}

// rawFillValue returns the fill_value member of a v1, v2 or draft array
// document, or null when it has none.
func rawFillValue(obj map[string]json.RawMessage) json.RawMessage {
	if raw := obj["fill_value"]; raw != nil {
		return raw
	}
	return json.RawMessage("null")
}

// bytesCodec returns the bytes codec for t stored with the given byte order.
func bytesCodec(t dtype, bigEndian bool) (codec.Codec, error) {
	if t.fields != nil {
		return structBytes{t.fields}, nil // each field in its own byte order
	}
	cfg := codec.Config{}
	if t.Size > 1 && t.kind != 'S' && t.kind != 'V' {
		endian := `"little"`
		if bigEndian {
			endian = `"big"`
		}
		cfg["endian"] = json.RawMessage(endian)
	}
	return codec.New("bytes", cfg)
}

// transposeCodec returns the transpose codec with the reversed dimension
// order that turns a C-order chunk into the F-order one.
func transposeCodec(rank int) (codec.Codec, error) {
	order := make([]int, rank)
	for i := range order {
		order[i] = rank - 1 - i
	}
	b, _ := json.Marshal(order)
	return codec.New("transpose", codec.Config{"order": b})
}

// chunkSpec returns the codec spec of one chunk.
func chunkSpec(t dtype, chunks []int64, fill []byte) codec.ArraySpec {
	shape := make([]int, len(chunks))
	for i, c := range chunks {
		shape[i] = int(c) // chunk sizes were checked against MaxChunkBytes
	}
	spec := codec.ArraySpec{Shape: shape, DataType: t.codecType()}
	if !t.Variable() {
		spec.FillValue = fill
	}
	return spec
}

// pipelineError classifies an error building a codec pipeline: unsupported
// stays unsupported, anything else is invalid metadata.
func pipelineError(err error) error {
	if errors.Is(err, codec.ErrUnsupported) || errors.Is(err, ErrInvalidMetadata) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrInvalidMetadata, err)
}

// setType records the data type, fill value and chunk layout.
func (a *Array) setType(dt dtype, fill []byte, layout Layout) {
	a.dataType = dt.DataType
	a.dt, a.fill, a.layout = dt, fill, layout
}

// typeError finishes a parsed array whose data type (raw) could not be
// parsed: an unsupported type leaves it with its Unsupported error set
// (its metadata still shows); any other error is the node's.
func (a *Array) typeError(raw json.RawMessage, err error) (*Array, error) {
	if !errors.Is(err, codec.ErrUnsupported) {
		return nil, err
	}
	a.dataType = DataType{Name: typeName(raw)}
	a.err = err
	return a, nil
}

// finish completes a parsed array of data type dt: its chunk layout, its
// fill value (fillRaw, as format spells fill values) and the codec
// pipeline chain builds. Invalid metadata is an error; an unsupported
// codec leaves the array with its Unsupported error set.
func (a *Array) finish(dt dtype, fillRaw json.RawMessage, format Format, chain func() ([]codec.Codec, error)) (*Array, error) {
	layout, err := newLayout(a.shape, a.chunks, dt.Size)
	if err != nil {
		return nil, err
	}
	fill, err := parseFillValue(dt, fillRaw, format)
	if err != nil {
		return nil, err
	}
	a.setType(dt, fill, layout)
	a.err = a.buildPipeline(chain)
	if errors.Is(a.err, ErrInvalidMetadata) {
		return nil, a.err
	}
	return a, nil
}

// buildPipeline builds the codec pipeline from the codecs chain returns.
func (a *Array) buildPipeline(chain func() ([]codec.Codec, error)) error {
	cs, err := chain()
	if err != nil {
		return pipelineError(err)
	}
	p, err := codec.NewPipeline(cs, chunkSpec(a.dt, a.chunks, a.fill))
	if err != nil {
		return pipelineError(err)
	}
	a.pipe = p
	return nil
}
