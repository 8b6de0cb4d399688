package zarr

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/zarrfs/zarrfs/codec"
)

// decodeObject parses a metadata document into its members, refusing
// documents over MaxDocumentSize, non-JSON and non-objects.
func decodeObject(name string, doc []byte) (map[string]json.RawMessage, error) {
	if len(doc) > MaxDocumentSize {
		return nil, fmt.Errorf("%w: %s is %d bytes, over the %d-byte limit", ErrInvalidMetadata, name, len(doc), MaxDocumentSize)
	}
	if !json.Valid(doc) {
		return decodeObjectError(name, doc)
	}
	obj, ok := splitObject(doc)
	if !ok {
		return decodeObjectError(name, doc)
	}
	if err := checkMemberNames(doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidMetadata, name, err)
	}
	return obj, nil
}

// decodeObjectError returns why decodeObject refuses doc, which is not
// valid JSON or not an object (or, should splitObject have refused what
// encoding/json accepts, decodes it as encoding/json does).
func decodeObjectError(name string, doc []byte) (map[string]json.RawMessage, error) {
	var obj map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(doc))
	if err := dec.Decode(&obj); err != nil {
		return nil, fmt.Errorf("%w: %s is not JSON: %v", ErrInvalidMetadata, name, err)
	}
	if obj == nil {
		return nil, fmt.Errorf("%w: %s is not a JSON object", ErrInvalidMetadata, name)
	}
	// Anything but white space after the object is refused (dec.More
	// would miss a stray "}" or "]").
	if rest := doc[dec.InputOffset():]; len(bytes.TrimLeft(rest, " \t\r\n")) > 0 {
		return nil, fmt.Errorf("%w: %s has data after the JSON object", ErrInvalidMetadata, name)
	}
	if err := checkMemberNames(doc); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrInvalidMetadata, name, err)
	}
	return obj, nil
}

// splitObject returns the members of doc, which must be valid JSON, as
// encoding/json decodes them into a map[string]json.RawMessage (the last of
// repeated names wins), in one pass over doc: decoding metadata documents
// was the largest cost of listing a mount's directories. ok is false when
// doc is not an object. The values share one copy of doc.
func splitObject(doc []byte) (obj map[string]json.RawMessage, ok bool) {
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return nil, false
	}
	doc = bytes.Clone(doc)
	obj = make(map[string]json.RawMessage, 8)
	if i = skipSpace(doc, i+1); i < len(doc) && doc[i] == '}' {
		return obj, true
	}
	for i < len(doc) && doc[i] == '"' {
		end := valueEnd(doc, i)
		key, ok := memberName(doc[i:end])
		if !ok {
			return nil, false
		}
		if i = skipSpace(doc, end); i >= len(doc) || doc[i] != ':' {
			return nil, false
		}
		i = skipSpace(doc, i+1)
		end = valueEnd(doc, i)
		if end <= i {
			return nil, false
		}
		obj[key] = json.RawMessage(doc[i:end:end])
		if i = skipSpace(doc, end); i >= len(doc) {
			return nil, false
		}
		if doc[i] == '}' {
			return obj, true
		}
		if doc[i] != ',' {
			return nil, false
		}
		i = skipSpace(doc, i+1)
	}
	return nil, false
}

// skipSpace returns the index of the first byte of doc from i on that is
// not JSON white space.
func skipSpace(doc []byte, i int) int {
	for i < len(doc) && (doc[i] == ' ' || doc[i] == '\t' || doc[i] == '\r' || doc[i] == '\n') {
		i++
	}
	return i
}

// valueEnd returns the index just after the JSON value of valid JSON that
// starts at doc[i], or at most len(doc).
func valueEnd(doc []byte, i int) int {
	if i >= len(doc) {
		return i
	}
	switch doc[i] {
	case '"':
		for j := i + 1; j < len(doc); j++ {
			switch doc[j] {
			case '\\':
				j++
			case '"':
				return j + 1
			}
		}
		return len(doc)
	case '{', '[':
		depth := 0
		for j := i; j < len(doc); j++ {
			switch doc[j] {
			case '"':
				j = valueEnd(doc, j) - 1
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return j + 1
				}
			}
		}
		return len(doc)
	default: // a number, true, false or null
		j := i
		for j < len(doc) && !strings.ContainsRune(",}] \t\r\n", rune(doc[j])) {
			j++
		}
		return j
	}
}

// memberName returns the string a quoted member name of valid JSON stands
// for, as encoding/json reads it (escapes decoded, invalid UTF-8 replaced).
func memberName(quoted []byte) (string, bool) {
	if len(quoted) < 2 {
		return "", false
	}
	plain := true
	for _, c := range quoted[1 : len(quoted)-1] {
		if c < 0x20 || c >= 0x80 || c == '\\' || c == '"' {
			plain = false
			break
		}
	}
	if plain {
		return string(quoted[1 : len(quoted)-1]), true
	}
	var s string
	if err := json.Unmarshal(quoted, &s); err != nil {
		return "", false
	}
	return s, true
}

// checkMemberNames refuses a JSON document (already known to be valid) in
// which an object, at any depth, names a member twice, or whose top-level
// object has two members whose names differ only in case ("shape" and
// "Shape"). Readers disagree on which of two such members counts (Go's
// encoding/json even matches struct fields case-insensitively), so the
// document means different things to different implementations.
//
// doc must be valid JSON (decodeObject checks that first): the scan below
// only tells member names from values and strings from the rest.
func checkMemberNames(doc []byte) error {
	// One frame per open container. Frames are reused by depth, and so
	// are their name lists, so a large document costs few allocations.
	type frame struct {
		object bool
		names  [][]byte            // the member names so far, for small objects
		set    map[string]struct{} // all of them, once there are many
	}
	const manyNames = 16
	var stack []frame
	depth := 0
	// The top-level names in lower case, in a list while they are few (a
	// metadata document has about ten), then in a map (by lower case).
	var lowBuf [manyNames]string
	lower, folded := lowBuf[:0], map[string][]byte(nil)
	wantName := false
	for i := 0; i < len(doc); {
		switch doc[i] {
		case '{', '[':
			if depth == len(stack) {
				stack = append(stack, frame{names: make([][]byte, 0, manyNames+1)})
			}
			f := &stack[depth]
			f.object, f.names = doc[i] == '{', f.names[:0]
			if f.set != nil {
				clear(f.set)
			}
			depth++
			wantName = doc[i] == '{'
			i++
		case '}', ']':
			depth--
			wantName = false
			i++
		case ',':
			wantName = depth > 0 && stack[depth-1].object
			i++
		case '"':
			j := i + 1
			escaped := false
			for j < len(doc) && doc[j] != '"' {
				if doc[j] == '\\' {
					escaped = true
					j++
				}
				j++
			}
			if j >= len(doc) {
				return errors.New("unterminated string")
			}
			if wantName {
				name := doc[i+1 : j]
				// Compare names as a JSON decoder reads them
				// (memberName): "\xd8" and "\xe1" are both U+FFFD.
				if escaped || !utf8.Valid(name) {
					s, ok := memberName(doc[i : j+1])
					if !ok {
						return fmt.Errorf("member name %s is not a JSON string", doc[i:j+1])
					}
					name = []byte(s)
				}
				f := &stack[depth-1]
				dup := false
				if f.set != nil {
					_, dup = f.set[string(name)]
				} else {
					for _, n := range f.names {
						if bytes.Equal(n, name) {
							dup = true
							break
						}
					}
				}
				if dup {
					return fmt.Errorf("member %q appears twice", name)
				}
				f.names = append(f.names, name)
				if f.set == nil && len(f.names) > manyNames {
					f.set = make(map[string]struct{}, 2*manyNames)
					for _, n := range f.names[:len(f.names)-1] {
						f.set[string(n)] = struct{}{}
					}
				}
				if f.set != nil {
					f.set[string(name)] = struct{}{}
				}
				if depth == 1 {
					if err := checkFolded(&lower, &folded, f.names, manyNames); err != nil {
						return err
					}
				}
				wantName = false
			}
			i = j + 1
		default:
			i++
		}
	}
	return nil
}

// checkFolded checks the last of the top-level names (all of them in
// names) against the others in lower case, which *lower holds while there
// are at most many and *folded after.
func checkFolded(lower *[]string, folded *map[string][]byte, names [][]byte, many int) error {
	name := names[len(names)-1]
	key := strings.ToLower(string(name))
	if *folded == nil {
		for i, l := range *lower {
			if l == key {
				return fmt.Errorf("members %q and %q differ only in case", names[i], name)
			}
		}
		if *lower = append(*lower, key); len(*lower) <= many {
			return nil
		}
		*folded = make(map[string][]byte, 2*many)
		for i, l := range *lower {
			(*folded)[l] = names[i]
		}
		return nil
	}
	if k, ok := (*folded)[key]; ok {
		return fmt.Errorf("members %q and %q differ only in case", k, name)
	}
	(*folded)[key] = name
	return nil
}

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
	if cb, ok := mulInt64(l.chunkElems, item); !ok || cb > MaxChunkBytes {
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

// v2ChainJSON returns the codecs of a v1, v2 or draft array, first applied
// on encoding first, as the JSON list of their v3 forms (Array.Codecs).
func v2ChainJSON(chain []v2Codec) (json.RawMessage, error) {
	list := make([]v3Codec, len(chain))
	for i, c := range chain {
		list[i] = c.v3JSON()
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
