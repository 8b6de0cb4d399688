package meta

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/internal/pyjson"
)

// V3Doc is the name of the v3 metadata document.
const V3Doc = "zarr.json"

// v3ArrayKeys and v3GroupKeys are the top-level members v3 defines (and
// zarr-python's consolidated_metadata for groups).
var (
	v3ArrayKeys = map[string]bool{
		"zarr_format": true, "node_type": true, "shape": true, "data_type": true,
		"chunk_grid": true, "chunk_key_encoding": true, "fill_value": true,
		"codecs": true, "attributes": true, "dimension_names": true,
		"storage_transformers": true,
	}
	v3GroupKeys = map[string]bool{
		"zarr_format": true, "node_type": true, "attributes": true,
		"consolidated_metadata": true,
	}
)

// V3Node is a parsed zarr.json: its node type, attributes and raw members.
type V3Node struct {
	Kind       Kind
	Attributes json.RawMessage
	obj        map[string]json.RawMessage
}

// ParseV3Node checks the members every zarr.json has.
//
// When the document is refused before its node type is checked (duplicate
// members, a wrong zarr_format …) the result still carries the kind its
// node_type names, if it names one plainly, so that a broken array still
// shows as an array whose data fails to read.
func ParseV3Node(doc []byte) (V3Node, error) {
	obj, err := DecodeObject(V3Doc, doc)
	if err != nil {
		return v3KindHint(doc), err
	}
	if err := checkZarrFormat(V3Doc, members{m: obj}, 3); err != nil {
		return v3KindHint(doc), err
	}
	n := V3Node{obj: obj, Attributes: json.RawMessage("{}")}
	var nodeType string
	if err := json.Unmarshal(obj["node_type"], &nodeType); err != nil {
		return V3Node{}, fmt.Errorf("%w: %s: node_type %s must be \"array\" or \"group\"", ErrInvalidMetadata, V3Doc, compact(obj["node_type"]))
	}
	known := v3GroupKeys
	switch nodeType {
	case "group":
		n.Kind = KindGroup
	case "array":
		n.Kind, known = KindArray, v3ArrayKeys
	default:
		return V3Node{}, fmt.Errorf("%w: %s: node_type %q must be \"array\" or \"group\"", ErrInvalidMetadata, V3Doc, nodeType)
	}
	if raw, ok := obj["attributes"]; ok && string(raw) != "null" {
		var a map[string]json.RawMessage
		if err := json.Unmarshal(raw, &a); err != nil || a == nil {
			return V3Node{Kind: n.Kind, Attributes: n.Attributes}, fmt.Errorf("%w: %s: attributes is not an object", ErrInvalidMetadata, V3Doc)
		}
		n.Attributes = raw
	}
	var unknown []string
	for k := range obj {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	sort.Strings(unknown)
	for _, k := range unknown {
		var ext struct {
			MustUnderstand *bool `json:"must_understand"`
		}
		if json.Unmarshal(obj[k], &ext) != nil || ext.MustUnderstand == nil || *ext.MustUnderstand {
			return n, codec.Unsupportedf("metadata member %q (it does not say \"must_understand\": false)", k)
		}
	}
	return n, nil
}

// v3KindHint returns a node with no members but the kind doc's node_type
// names ("array" or "group", exactly), or the zero node.
func v3KindHint(doc []byte) V3Node {
	var obj map[string]json.RawMessage
	if len(doc) > MaxDocumentSize || json.Unmarshal(pyjson.Turn(doc), &obj) != nil {
		return V3Node{}
	}
	switch string(obj["node_type"]) {
	case `"array"`:
		return V3Node{Kind: KindArray, Attributes: json.RawMessage("{}")}
	case `"group"`:
		return V3Node{Kind: KindGroup, Attributes: json.RawMessage("{}")}
	}
	return V3Node{}
}

// ParseV3Array parses the array members of a zarr.json. As with
// ParseV2Array, an error means the node is unusable, while an unsupported
// data type or codec gives an Array with its Unsupported error set.
func ParseV3Array(n V3Node) (*Array, error) {
	obj := n.obj
	shape, err := parseDims("shape", obj["shape"], false)
	if err != nil {
		return nil, err
	}
	grid, err := parseExt("chunk_grid", obj["chunk_grid"])
	if err != nil {
		return nil, err
	}
	var chunks []int64
	note := ""          // how the array is read, for info.txt
	var edges [][]int64 // a rectilinear grid's
	// gridErr is set for a chunk grid zarrfs cannot read: the array keeps
	// its shape, data type and fill value (ls, tree, info.txt show them),
	// only its contents are unsupported.
	var gridErr error
	if grid.Name == "regular" {
		chunks, err = parseDims("chunk_grid chunk_shape", grid.Config["chunk_shape"], true)
		if err != nil {
			return nil, err
		}
		if len(chunks) != len(shape) {
			return nil, fmt.Errorf("%w: chunk_shape %v and shape %v differ in rank", ErrInvalidMetadata, chunks, shape)
		}
	} else if grid.Name == "rectilinear" {
		if edges, err = parseRectilinear(grid.Config, shape); errors.Is(err, codec.ErrUnsupported) {
			gridErr = err
		} else if err != nil {
			return nil, err
		}
		note = "rectilinear chunk grid (chunk_shapes in zarr.json): chunks shows the largest chunk"
	} else {
		gridErr = codec.Unsupportedf("chunk grid %q", grid.Name)
	}
	keys, err := parseV3KeyEncoding(obj["chunk_key_encoding"])
	if err != nil {
		return nil, err
	}
	if raw, ok := obj["storage_transformers"]; ok && string(raw) != "null" {
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%w: storage_transformers is not a list", ErrInvalidMetadata)
		}
		if len(list) > 0 {
			e, err := parseExt("storage_transformers[0]", list[0])
			if err != nil {
				return nil, err
			}
			return nil, codec.Unsupportedf("storage transformer %q", e.Name)
		}
	}
	var dimNames []string
	if raw, ok := obj["dimension_names"]; ok && string(raw) != "null" {
		var names []*string
		if err := json.Unmarshal(raw, &names); err != nil || len(names) != len(shape) {
			return nil, fmt.Errorf("%w: dimension_names %s must be a list of %d strings or nulls", ErrInvalidMetadata, compact(raw), len(shape))
		}
		dimNames = make([]string, len(names))
		for i, s := range names {
			if s != nil {
				dimNames[i] = *s
			}
		}
	}
	codecsRaw, ok := obj["codecs"]
	if !ok {
		// GDAL 3.8 to 3.10 wrote uncompressed arrays without codecs. The
		// specification makes them invalid; GDAL reads them as the bytes
		// codec, little-endian, and zarrfs reads what GDAL writes.
		codecsRaw = json.RawMessage(`[{"name":"bytes","configuration":{"endian":"little"}}]`)
		note = "zarr.json has no codecs (GDAL 3.8–3.10 writes none for uncompressed data): read as bytes, little-endian, as GDAL reads it"
	}
	exts, err := codec.ParseCodecs("codecs", codecsRaw)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidMetadata, err)
	}
	fillRaw, ok := obj["fill_value"]
	if !ok {
		return nil, fmt.Errorf("%w: fill_value is missing", ErrInvalidMetadata)
	}
	if _, ok := obj["data_type"]; !ok {
		return nil, fmt.Errorf("%w: data_type is missing", ErrInvalidMetadata)
	}
	a := &Array{
		format:    FormatV3,
		shape:     shape,
		chunks:    chunks,
		fillValue: fillRaw,
		codecs:    codecsRaw,
		dimNames:  dimNames,
		keys:      keys,
		note:      note,
		edges:     edges,
	}
	dt, err := parseV3DataType(obj["data_type"])
	if err != nil {
		return a.typeError(obj["data_type"], err)
	}
	if gridErr != nil {
		return a.gridError(dt, fillRaw, gridErr)
	}
	return a.finish(dt, fillRaw, FormatV3, func() ([]codec.Codec, error) {
		cs, err := codec.NewCodecs(exts)
		for i, c := range cs {
			cs[i] = structCodec(c, dt)
		}
		return cs, err
	})
}

// parseV3KeyEncoding parses chunk_key_encoding: "default" (c/1/2, or with
// separator ".") or "v2" (1.2, or with separator "/").
func parseV3KeyEncoding(raw json.RawMessage) (chunkKeys, error) {
	if raw == nil {
		return chunkKeys{}, fmt.Errorf("%w: chunk_key_encoding is missing", ErrInvalidMetadata)
	}
	e, err := parseExt("chunk_key_encoding", raw)
	if err != nil {
		return chunkKeys{}, err
	}
	switch e.Name {
	case "default":
		sep, err := parseSeparator("chunk_key_encoding separator", e.Config["separator"], "/")
		return chunkKeys{prefix: "c", sep: sep}, err
	case "v2":
		sep, err := parseSeparator("chunk_key_encoding separator", e.Config["separator"], ".")
		return chunkKeys{sep: sep}, err
	}
	return chunkKeys{}, codec.Unsupportedf("chunk key encoding %q", e.Name)
}
