package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/internal/pyjson"
)

// parseDims parses a list of non-negative (positive when positive is set)
// integers: a shape or a chunk shape.
func parseDims(what string, raw json.RawMessage, positive bool) ([]int64, error) {
	if dims, ok := plainDims(raw, positive); ok {
		return dims, nil
	}
	return parseDimsSlowly(what, raw, positive)
}

// parseDimsSlowly is parseDims for what plainDims leaves to it: it decides
// with encoding/json, and says why it refuses raw.
func parseDimsSlowly(what string, raw json.RawMessage, positive bool) ([]int64, error) {
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

// plainDims reads what parseDims accepts, when raw is a list of plain
// JSON integers ("[10, 20]") that it accepts: ok is false for anything
// else, which parseDims reads (and refuses) the general way.
func plainDims(raw []byte, positive bool) (dims []int64, ok bool) {
	if len(raw) < 2 || raw[0] != '[' || raw[len(raw)-1] != ']' {
		return nil, false
	}
	var buf [MaxRank]int64
	n := 0
	i := pyjson.SkipSpace(raw, 1)
	if raw[i] != ']' {
		for {
			j := i
			if raw[j] == '-' {
				j++
			}
			k := pyjson.Digits(raw, j)
			if k == j || raw[j] == '0' && k > j+1 || n == MaxRank {
				return nil, false
			}
			v, err := strconv.ParseInt(string(raw[i:k]), 10, 64)
			if err != nil || v < 0 || positive && v == 0 {
				return nil, false
			}
			buf[n] = v
			n++
			if i = pyjson.SkipSpace(raw, k); raw[i] == ']' {
				break
			}
			if raw[i] != ',' {
				return nil, false
			}
			i = pyjson.SkipSpace(raw, i+1)
		}
	}
	if i != len(raw)-1 {
		return nil, false
	}
	return slices.Clone(buf[:n:n]), true
}

// parseShapeAndChunks reads the "shape" and "chunks" of a v1 or v2 array
// document, which must have the same rank.
func parseShapeAndChunks(obj members) (shape, chunks []int64, err error) {
	if shape, err = parseDims("shape", obj.get("shape"), false); err != nil {
		return nil, nil, err
	}
	if chunks, err = parseDims("chunks", obj.get("chunks"), true); err != nil {
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
	// A usual codec object is read in one pass (scanObject), as encoding/json
	// reads it; any other the general way below.
	if obj, outcome := scanObject(raw); outcome == pyjson.Scanned {
		if id, ok := plainString(obj["id"]); ok && id != "" {
			delete(obj, "id")
			return v2Codec{id: id, cfg: obj}, nil
		}
	}
	return parseV2CodecSlowly(what, raw)
}

// parseV2CodecSlowly is parseV2Codec reading raw with encoding/json.
func parseV2CodecSlowly(what string, raw json.RawMessage) (v2Codec, error) {
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
	if b, ok := plainChainJSON(filters, compressor); ok {
		return b, nil
	}
	return marshalChainJSON(filters, compressor)
}

// marshalChainJSON is v2ChainJSON written by json.Marshal.
func marshalChainJSON(filters []v2Codec, compressor *v2Codec) (json.RawMessage, error) {
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

// plainChainJSON returns what v2ChainJSON's json.Marshal does, written
// directly, when every name and member name is plain (printable ASCII that
// Marshal writes as it is) and every value is compact JSON with nothing
// Marshal would escape: ok is false otherwise. The values were decoded
// from metadata documents, so they are valid JSON.
func plainChainJSON(filters []v2Codec, compressor *v2Codec) (json.RawMessage, bool) {
	if len(filters) == 0 && compressor == nil {
		return json.RawMessage("[]"), true
	}
	b := make([]byte, 0, 64)
	b = append(b, '[')
	for i := 0; i <= len(filters); i++ {
		c := compressor
		if i < len(filters) {
			c = &filters[i]
		}
		if c == nil {
			break
		}
		if !plainJSONString(c.id) {
			return nil, false
		}
		if i > 0 {
			b = append(b, ',')
		}
		b = append(append(append(b, `{"name":"`...), c.id...), '"')
		if len(c.cfg) > 0 {
			var buf [16]string
			keys := buf[:0]
			for k, v := range c.cfg {
				if !plainJSONString(k) || !plainJSONValue(v) {
					return nil, false
				}
				keys = append(keys, k)
			}
			slices.Sort(keys)
			b = append(b, `,"configuration":{`...)
			for j, k := range keys {
				if j > 0 {
					b = append(b, ',')
				}
				b = append(append(append(append(b, '"'), k...), `":`...), c.cfg[k]...)
			}
			b = append(b, '}')
		}
		b = append(b, '}')
	}
	return append(b, ']'), true
}

// plainJSONString reports whether encoding/json writes s as it is between
// quotes: printable ASCII, no quote or backslash, none of the characters
// it escapes for HTML.
func plainJSONString(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// plainJSONValue reports whether json.Marshal writes the valid JSON v (a
// json.RawMessage) as it is: no white space, nothing beyond ASCII and none
// of the characters it escapes for HTML.
func plainJSONValue(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	for _, c := range v {
		if c <= ' ' || c >= 0x7f || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}

// plainString returns the string the JSON string raw stands for when it
// is plain (pyjson.String), interned; ok is false for anything else,
// which the caller reads with json.Unmarshal.
func plainString(raw []byte) (s string, ok bool) {
	chars, ok := pyjson.String(raw)
	if !ok {
		return "", false
	}
	return memberKey(chars), true
}

// rawFillValue returns the fill_value member of a v1, v2 or draft array
// document, or null when it has none.
func rawFillValue(obj members) json.RawMessage {
	if raw := obj.get("fill_value"); raw != nil {
		return raw
	}
	return json.RawMessage("null")
}

// bytesCodec returns the bytes codec for t stored with the given byte order.
func bytesCodec(t dtype, bigEndian bool) (codec.Codec, error) {
	if t.fields != nil {
		return structBytes{t.fields}, nil // each field in its own byte order
	}
	// What codec.New("bytes", …) builds, with "endian" set for types of
	// more than one byte.
	return codec.BytesCodec{Big: bigEndian && t.Size > 1 && t.kind != 'S' && t.kind != 'V'}, nil
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

// gridError finishes a parsed array of data type dt whose chunk grid
// cannot be read (err): its shape, size and fill value are known, its
// contents unsupported.
func (a *Array) gridError(dt dtype, fillRaw json.RawMessage, err error) (*Array, error) {
	layout, lerr := sizeLayout(a.shape, dt.Size)
	if lerr != nil {
		return nil, lerr
	}
	fill, ferr := parseFillValue(dt, fillRaw, a.format)
	if ferr != nil {
		return nil, ferr
	}
	a.setType(dt, fill, layout)
	a.err = err
	return a, nil
}

// finish completes a parsed array of data type dt: its chunk layout, its
// fill value (fillRaw, as format spells fill values) and the codec
// pipeline chain builds. Invalid metadata is an error; an unsupported
// codec leaves the array with its Unsupported error set.
func (a *Array) finish(dt dtype, fillRaw json.RawMessage, format Format, chain func() ([]codec.Codec, error)) (*Array, error) {
	var layout Layout
	var err error
	if a.edges != nil {
		layout, a.chunks, err = newRectLayout(a.shape, a.edges, dt.Size)
	} else {
		layout, err = newLayout(a.shape, a.chunks, dt.Size)
	}
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
	spec := a.chunks
	if a.edges != nil && a.layout.nchunks > 0 {
		// A rectilinear grid's chunks have their own pipelines
		// (PipelineOf); this one is the first chunk's.
		a.chainCodecs = cs
		spec = a.layout.ChunkShapeOf(make([]int64, len(a.shape)))
	}
	p, err := codec.NewPipeline(cs, chunkSpec(a.dt, spec, a.fill))
	if err != nil {
		return pipelineError(err)
	}
	a.pipe = p
	return nil
}
