package zarr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/internal/nd"
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

// chunkLayout is an array's chunk grid and sizes.
type chunkLayout struct {
	grid       []int64 // chunks per dimension
	nelem      int64   // elements in the array
	size       int64   // bytes of the logical content (0 for variable-length types)
	chunkElems int64   // elements in one chunk
	nchunks    int64   // chunks in the grid
	// slabChunks is the chunks of one step along the first dimension:
	// those a C-order reader meets in one row of chunks.
	slabChunks int64
}

// newChunkLayout checks a shape against its chunk shape and computes the
// layout.
func newChunkLayout(shape, chunks []int64, itemSize int) (chunkLayout, error) {
	if len(shape) != len(chunks) {
		return chunkLayout{}, fmt.Errorf("%w: chunk shape %v does not match the rank of shape %v", ErrInvalidMetadata, chunks, shape)
	}
	var l chunkLayout
	var err error
	if l.nelem, err = product("shape", shape, 1); err != nil {
		return l, err
	}
	if l.size, err = product("shape", shape, int64(itemSize)); err != nil {
		return l, err
	}
	if l.chunkElems, err = product("chunk shape", chunks, 1); err != nil {
		return l, err
	}
	item := int64(max(itemSize, 1))
	if cb, ok := nd.Mul(l.chunkElems, item); !ok || cb > MaxChunkBytes {
		return l, fmt.Errorf("%w: chunk shape %v of %d-byte elements is over the %d-byte chunk limit", ErrUnsupported, chunks, item, MaxChunkBytes)
	}
	l.grid = make([]int64, len(shape))
	l.nchunks, l.slabChunks = 1, 1
	for i := range shape {
		l.grid[i] = ceilDiv(shape[i], chunks[i])
		// No more chunks than elements (a chunk holds one at least, or
		// the array none), so the products fit.
		l.nchunks *= l.grid[i]
		if i > 0 {
			l.slabChunks *= l.grid[i]
		}
	}
	return l, nil
}

// chunkLastElem returns the C-order index of the last element of the
// chunk with linear index lin (in an array of the given shape and chunk
// shape).
func (l chunkLayout) chunkLastElem(shape, chunks []int64, lin int64) int64 {
	var e, stride int64 = 0, 1
	for i := len(shape) - 1; i >= 0; i-- {
		idx := lin % l.grid[i]
		lin /= l.grid[i]
		e += (min((idx+1)*chunks[i], shape[i]) - 1) * stride
		stride *= shape[i]
	}
	return e
}

// linear returns the linear index of the chunk at idx (C order over the
// chunk grid).
func (l chunkLayout) linear(idx []int64) int64 {
	var lin int64
	for i, n := range l.grid {
		lin = lin*n + idx[i]
	}
	return lin
}

// chunkOf returns the linear index of the chunk holding element e (a
// C-order index into an array of the given shape and chunk shape).
func (l chunkLayout) chunkOf(shape, chunks []int64, e int64) int64 {
	var lin, stride int64 = 0, 1
	for i := len(shape) - 1; i >= 0; i-- {
		lin += e % shape[i] / chunks[i] * stride
		e /= shape[i]
		stride *= l.grid[i]
	}
	return lin
}

// chunkKeys encodes chunk coordinates as store keys below the array.
type chunkKeys struct {
	prefix string // "c" for the v3 default encoding, "" otherwise
	sep    string
	// glued joins the prefix to the first index ("c0/1", the v3 drafts).
	glued bool
	// dir, when set, is the store path the keys are below instead of the
	// array's own path (the data/… prefixes of the v3 drafts).
	dir string
}

// key returns the key of the chunk at idx relative to the array.
func (k chunkKeys) key(idx []int64) string {
	if k.glued && len(idx) == 0 {
		return k.prefix + "0" // zarr-python 2.13 writes the one chunk of a 0-d draft array as c0
	}
	var b strings.Builder
	b.WriteString(k.prefix)
	for i, x := range idx {
		if i > 0 || k.prefix != "" && !k.glued {
			b.WriteString(k.sep)
		}
		b.WriteString(strconv.FormatInt(x, 10))
	}
	if b.Len() == 0 {
		return "0"
	}
	return b.String()
}

// parseSeparator checks a chunk key separator.
func parseSeparator(what string, raw json.RawMessage, def string) (string, error) {
	if raw == nil || string(raw) == "null" {
		return def, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil || s != "." && s != "/" {
		return "", fmt.Errorf("%w: %s %s must be \".\" or \"/\"", ErrInvalidMetadata, what, compact(raw))
	}
	return s, nil
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

// v3JSON returns c in v3 form {"name": …, "configuration": {…}}.
func (c v2Codec) v3JSON() v3Codec {
	if len(c.cfg) == 0 {
		return v3Codec{Name: c.id}
	}
	return v3Codec{Name: c.id, Configuration: c.cfg}
}

// v2ChainJSON returns the codecs of a v1, v2 or draft array, the filters
// then the compressor (nil for none), as the JSON list of their v3 forms
// (Array.Codecs).
func v2ChainJSON(filters []v2Codec, compressor *v2Codec) (json.RawMessage, error) {
	list := make([]v3Codec, 0, len(filters)+1)
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
	if errors.Is(err, ErrUnsupported) || errors.Is(err, ErrInvalidMetadata) {
		return err
	}
	return fmt.Errorf("%w: %v", ErrInvalidMetadata, err)
}

// jsonFloat returns f as a JSON value the way zarr writes fill values.
func jsonFloat(f float64) any {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	}
	return f
}

// setType records the data type, fill value and chunk layout.
func (a *Array) setType(dt dtype, fill []byte, layout chunkLayout) {
	a.DataType = dt.DataType
	a.dt, a.fill, a.layout = dt, fill, layout
}

// typeError finishes a parsed array whose data type (raw) could not be
// parsed: an unsupported type leaves it with Err set (its metadata still
// shows); any other error is the node's.
func (a *Array) typeError(raw json.RawMessage, err error) (*Array, error) {
	if !errors.Is(err, ErrUnsupported) {
		return nil, err
	}
	a.DataType = DataType{Name: typeName(raw)}
	a.Err = err
	return a, nil
}

// finish completes a parsed array of data type dt: its chunk layout, its
// fill value (fillRaw, as format spells fill values) and the codec
// pipeline chain builds. Invalid metadata is an error; an unsupported
// codec leaves the array with Err set.
func (a *Array) finish(dt dtype, fillRaw json.RawMessage, format Format, chain func() ([]codec.Codec, error)) (*Array, error) {
	layout, err := newChunkLayout(a.Shape, a.ChunkShape, dt.Size)
	if err != nil {
		return nil, err
	}
	fill, err := parseFillValue(dt, fillRaw, format)
	if err != nil {
		return nil, err
	}
	a.setType(dt, fill, layout)
	a.Err = a.buildPipeline(chain)
	if errors.Is(a.Err, ErrInvalidMetadata) {
		return nil, a.Err
	}
	return a, nil
}

// buildPipeline builds the codec pipeline from the codecs chain returns.
func (a *Array) buildPipeline(chain func() ([]codec.Codec, error)) error {
	cs, err := chain()
	if err != nil {
		return pipelineError(err)
	}
	p, err := codec.NewPipeline(cs, chunkSpec(a.dt, a.ChunkShape, a.fill))
	if err != nil {
		return pipelineError(err)
	}
	a.pipe = p
	return nil
}
