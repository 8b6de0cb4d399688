package meta

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store"
)

// The v3 drafts keep an entry point zarr.json at the root whose
// zarr_format is a URI, and the documents of the nodes under meta/ and
// their chunks under data/. Three layouts are read:
//
//   - the 2019 draft: meta/root.group, meta/root/a/b.array (no suffix),
//     chunks data/a/b/0.0 (separator "." unless the grid says otherwise);
//   - the draft zarr-python 2.13 writes (ZARR_V3_EXPERIMENTAL_API=1):
//     metadata_key_suffix ".json", meta/root.group.json,
//     meta/root/a/b.array.json, chunks data/root/a/b/c0/0;
//   - the 2022 draft: zarr_format https://purl.org/zarr/spec/core/3.0,
//     meta/group.json, meta/a/b.array.json, chunks data/a/b/c0/0.
//
// A node with no document whose meta/ prefix has descendants is an
// implicit group. The mount shows a node's document as array.json or
// group.json and the root also shows zarr.json.
//
// Draft is such a layout, as the entry point describes it.
type Draft struct {
	format      Format
	metaRoot    string // "meta/root" or "meta"
	suffix      string // metadata key suffix: "" or ".json"
	dataRoot    string // "data" or "data/root"
	chunkPrefix string // "c" (2022) or "" (2019)
	defaultSep  string // "/" (2022) or "." (2019)
	entry       []byte // the zarr.json document
}

// Draft entry point zarr_format URIs.
const (
	draft2022Core     = "https://purl.org/zarr/spec/core/3.0"
	draftProtocolCore = "/purl.org/zarr/spec/protocol/core/3.0" // after http: or https:
)

// DetectDraft reads the root zarr.json: nil (and no error) when it is not a
// draft entry point (its zarr_format is not a string), the draft's layout,
// or an error for a draft entry point zarrfs cannot follow.
func DetectDraft(doc []byte) (*Draft, error) {
	obj, err := DecodeObject(V3Doc, doc)
	if err != nil {
		return nil, nil // not a draft; the v3 root node reports the problem
	}
	var uri string
	if json.Unmarshal(obj["zarr_format"], &uri) != nil {
		return nil, nil
	}
	var l Draft
	switch {
	case uri == draft2022Core || uri == "http:"+strings.TrimPrefix(draft2022Core, "https:"):
		l = Draft{format: FormatV3Draft2022, metaRoot: "meta", suffix: ".json", dataRoot: "data",
			chunkPrefix: "c", defaultSep: "/"}
		var enc struct {
			Extension *string `json:"extension"`
			Type      string  `json:"type"`
			Suffix    *string `json:"metadata_key_suffix"`
		}
		if raw, ok := obj["metadata_encoding"]; ok {
			if err := json.Unmarshal(raw, &enc); err != nil {
				return nil, fmt.Errorf("%w: %s: metadata_encoding %s is not an object", ErrInvalidMetadata, V3Doc, compact(raw))
			}
			if enc.Extension != nil || enc.Type != "json" {
				return nil, codec.Unsupportedf("metadata encoding %s", compact(raw))
			}
			if enc.Suffix != nil {
				l.suffix = *enc.Suffix
			}
		}
	case strings.HasSuffix(uri, draftProtocolCore) && (strings.HasPrefix(uri, "http:") || strings.HasPrefix(uri, "https:")):
		if raw, ok := obj["metadata_key_suffix"]; ok {
			// zarr-python 2.13's experimental v3.
			l = Draft{format: FormatV3Draft2022, metaRoot: "meta/root", dataRoot: "data/root",
				chunkPrefix: "c", defaultSep: "/"}
			if err := json.Unmarshal(raw, &l.suffix); err != nil {
				return nil, fmt.Errorf("%w: %s: metadata_key_suffix %s is not a string", ErrInvalidMetadata, V3Doc, compact(raw))
			}
		} else {
			l = Draft{format: FormatV3Draft2019, metaRoot: "meta/root", dataRoot: "data", defaultSep: "."}
			var enc string
			if raw, ok := obj["metadata_encoding"]; ok && (json.Unmarshal(raw, &enc) != nil || enc != "application/json") {
				return nil, codec.Unsupportedf("metadata encoding %s", compact(raw))
			}
		}
	default:
		return nil, codec.Unsupportedf("v3 draft hierarchy (zarr_format %q)", uri)
	}
	if strings.Contains(l.suffix, "/") {
		return nil, fmt.Errorf("%w: %s: metadata key suffix %q holds a slash", ErrInvalidMetadata, V3Doc, l.suffix)
	}
	if err := checkDraftExtensions(V3Doc, obj["extensions"]); err != nil {
		return nil, err
	}
	l.entry = doc
	return &l, nil
}

// checkDraftExtensions checks a draft "extensions" list: zarrfs implements
// none, so one that must be understood makes the node (or, in zarr.json,
// the hierarchy) unsupported.
func checkDraftExtensions(doc string, raw json.RawMessage) error {
	if raw == nil || string(raw) == "null" {
		return nil
	}
	var list []struct {
		Extension      string `json:"extension"`
		MustUnderstand *bool  `json:"must_understand"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return fmt.Errorf("%w: %s: extensions %s is not a list of objects", ErrInvalidMetadata, doc, compact(raw))
	}
	for _, e := range list {
		if e.MustUnderstand == nil || *e.MustUnderstand {
			return codec.Unsupportedf("extension %q (it does not say \"must_understand\": false)", e.Extension)
		}
	}
	return nil
}

// draftFormatExample is the zarr_format of a 2019 draft node document.
const draftFormatExample = "http://purl.org/zarr/spec/protocol/core/3.0"

// checkDraftFormat checks the zarr_format of a draft node document, which
// the earliest 2019 draft requires and the later ones leave out: when
// present it must be the URI of a v3 draft's core specification, of any
// 3.x version (the 2019 draft lets a reader assume 3.x is compatible).
// Another major version is unsupported; anything else is invalid.
func checkDraftFormat(name string, raw json.RawMessage) error {
	if raw == nil {
		return nil
	}
	var uri string
	if err := json.Unmarshal(raw, &uri); err != nil {
		return fmt.Errorf("%w: %s: zarr_format %s, want a v3 draft URI such as %q", ErrInvalidMetadata, name, compact(raw), draftFormatExample)
	}
	rest, ok := strings.CutPrefix(uri, "https://")
	if !ok {
		rest, ok = strings.CutPrefix(uri, "http://")
	}
	var version string
	if ok {
		if version, ok = strings.CutPrefix(rest, "purl.org/zarr/spec/protocol/core/"); !ok {
			version, ok = strings.CutPrefix(rest, "purl.org/zarr/spec/core/")
		}
	}
	major, _, _ := strings.Cut(version, ".")
	switch {
	case !ok || major == "" || strings.Trim(major, "0123456789") != "":
		return fmt.Errorf("%w: %s: zarr_format %q is not a v3 draft URI such as %q", ErrInvalidMetadata, name, uri, draftFormatExample)
	case major != "3":
		return codec.Unsupportedf("%s: zarr_format %q (core version %s)", name, uri, version)
	}
	return nil
}

// Format returns the draft's format.
func (l *Draft) Format() Format { return l.format }

// Entry returns the entry point zarr.json document.
func (l *Draft) Entry() []byte { return l.entry }

// MetaKey returns the store key of the document of the node at p of the
// given kind.
func (l *Draft) MetaKey(p string, k Kind) string {
	kind := k.String()
	switch {
	case p != "":
		return l.metaRoot + "/" + p + "." + kind + l.suffix
	case l.metaRoot == "meta":
		return "meta/" + kind + l.suffix
	}
	return l.metaRoot + "." + kind + l.suffix
}

// MetaDir returns the store prefix of the documents of the children of
// the group at p.
func (l *Draft) MetaDir(p string) string { return store.Join(l.metaRoot, p) }

// ChildName returns the name of the child whose document key (under
// MetaDir) is key, or false when key names no document.
func (l *Draft) ChildName(key string) (string, bool) {
	for _, kind := range []string{".array", ".group"} {
		if name, ok := strings.CutSuffix(key, kind+l.suffix); ok {
			return name, true
		}
	}
	return "", false
}

// ParseNode parses the document doc (named name in the node's directory)
// of the node at p, of the given kind: it returns the node's attributes
// (nil when none) and, for an array, its metadata. An error means the node
// is unusable; its attributes are returned when they were read before.
func (l *Draft) ParseNode(name string, kind Kind, doc []byte, p string) (attrs json.RawMessage, a *Array, err error) {
	obj, err := DecodeObject(name, doc)
	if err != nil {
		return nil, nil, err
	}
	if raw, ok := obj["attributes"]; ok && string(raw) != "null" {
		if attrs, err = ParseAttributes(name+" attributes", raw); err != nil {
			return nil, nil, err
		}
	}
	if err := checkDraftFormat(name, obj["zarr_format"]); err != nil {
		return attrs, nil, err
	}
	if err := checkDraftExtensions(name, obj["extensions"]); err != nil {
		return attrs, nil, err
	}
	if kind == KindGroup {
		return attrs, nil, checkDraftMembers(name, obj, draftGroupKeys)
	}
	a, err = parseDraftArray(l, name, obj, p)
	return attrs, a, err
}

// The members draft documents may have (zarr_format only in the earliest
// 2019 draft; dimension_names and dimension_separator, a copy of the grid's
// separator, as zarr-python 2.13 writes them).
var (
	draftGroupKeys = map[string]bool{"attributes": true, "extensions": true, "zarr_format": true}
	draftArrayKeys = map[string]bool{
		"attributes": true, "extensions": true, "zarr_format": true, "shape": true, "data_type": true,
		"chunk_grid": true, "chunk_memory_layout": true, "compressor": true, "chunk_codecs": true,
		"codecs": true, "fill_value": true, "storage_transformers": true, "dimension_names": true,
		"dimension_separator": true,
	}
)

// checkDraftMembers refuses members the drafts do not define: they are
// reserved, and an implementation must not open what it does not know.
func checkDraftMembers(name string, obj map[string]json.RawMessage, known map[string]bool) error {
	var unknown []string
	for k := range obj {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) == 0 {
		return nil
	}
	sort.Strings(unknown)
	return codec.Unsupportedf("%s member %q", name, unknown[0])
}

// parseDraftArray parses a draft array document. As with ParseV2Array, an
// error means the node is unusable, while an unsupported data type, codec
// or extension gives an Array with its Unsupported error set.
func parseDraftArray(l *Draft, name string, obj map[string]json.RawMessage, p string) (*Array, error) {
	shape, err := parseDims("shape", obj["shape"], false)
	if err != nil {
		return nil, err
	}
	var grid struct {
		Type       string          `json:"type"`
		Extension  *string         `json:"extension"`
		ChunkShape json.RawMessage `json:"chunk_shape"`
		Separator  json.RawMessage `json:"separator"`
	}
	if obj["chunk_grid"] == nil {
		return nil, fmt.Errorf("%w: chunk_grid is missing", ErrInvalidMetadata)
	}
	if err := json.Unmarshal(obj["chunk_grid"], &grid); err != nil {
		return nil, fmt.Errorf("%w: chunk_grid %s is not an object", ErrInvalidMetadata, compact(obj["chunk_grid"]))
	}
	if grid.Extension != nil || grid.Type != "regular" {
		return nil, codec.Unsupportedf("chunk grid %s", compact(obj["chunk_grid"]))
	}
	chunks, err := parseDims("chunk_grid chunk_shape", grid.ChunkShape, true)
	if err != nil {
		return nil, err
	}
	if len(chunks) != len(shape) {
		return nil, fmt.Errorf("%w: chunk_shape %v and shape %v differ in rank", ErrInvalidMetadata, chunks, shape)
	}
	sep, err := parseSeparator("chunk_grid separator", grid.Separator, l.defaultSep)
	if err != nil {
		return nil, err
	}
	order := "C"
	if raw, ok := obj["chunk_memory_layout"]; ok {
		if err := json.Unmarshal(raw, &order); err != nil || order != "C" && order != "F" {
			return nil, codec.Unsupportedf("chunk memory layout %s", compact(raw))
		}
	}
	specs, err := draftCodecs(obj)
	if err != nil {
		return nil, err
	}
	var filters []v2Codec
	if l.dataRoot == "data/root" {
		if filters, err = draftFilters(obj["attributes"]); err != nil {
			return nil, err
		}
	}
	specs = append(filters, specs...)
	codecsJSON, err := v2ChainJSON(specs, nil)
	if err != nil {
		return nil, err
	}
	fillRaw := rawFillValue(members{m: obj})
	a := &Array{format: l.format, shape: shape, chunks: chunks, fillValue: fillRaw, codecs: codecsJSON,
		keys: chunkKeys{prefix: l.chunkPrefix, sep: sep, glued: true, dir: store.Join(l.dataRoot, p)}}
	if raw, ok := obj["dimension_names"]; ok && string(raw) != "null" {
		if err := json.Unmarshal(raw, &a.dimNames); err != nil || len(a.dimNames) != len(shape) {
			return nil, fmt.Errorf("%w: dimension_names %s must be a list of %d strings", ErrInvalidMetadata, compact(raw), len(shape))
		}
	}
	dt, err := parseDraftDataType(obj["data_type"])
	if err == nil && dt.kind == 'O' {
		err = codec.Unsupportedf("object data type without a vlen-utf8 or vlen-bytes filter")
		for _, f := range filters {
			if t, ok := vlenType(f.id); ok {
				dt, err = t, nil
				break
			}
		}
	}
	if err == nil {
		err = checkDraftMembers(name, obj, draftArrayKeys)
	}
	if err == nil {
		a.shards, err = parseDraftTransformers(obj["storage_transformers"], a.keys, len(shape))
	}
	if err != nil {
		b, err := a.typeError(obj["data_type"], err)
		if b != nil && dt.Name != "" {
			b.dataType = dt.DataType
		}
		return b, err
	}
	if dt.kind == 'f' || dt.kind == 'c' {
		// The 2022 draft spells positive infinity "+Infinity" and allows
		// bit patterns in binary ("0b…") as well as in hexadecimal.
		fillRaw = bytes.ReplaceAll(fillRaw, []byte(`"+Infinity"`), []byte(`"Infinity"`))
		fillRaw = binaryToHex(fillRaw)
	}
	return a.finish(dt, fillRaw, FormatV2, func() ([]codec.Codec, error) {
		return draftChain(dt, len(shape), order, specs)
	})
}

// draftCodecs returns the codecs of a draft array in encoding order, from
// "compressor" ({"codec": URI, "configuration": {…}}, the 2019 draft and
// zarr-python 2.13), "chunk_codecs" ([{"codec": URI, …options}], the
// earliest 2019 draft) or "codecs" ([{"type": URI, "configuration": {…}}],
// the 2022 draft).
func draftCodecs(obj map[string]json.RawMessage) ([]v2Codec, error) {
	var out []v2Codec
	one := func(what string, raw json.RawMessage, uriKey string, inline bool) error {
		var m codec.Config
		if err := json.Unmarshal(raw, &m); err != nil || m == nil {
			return fmt.Errorf("%w: %s %s is not an object", ErrInvalidMetadata, what, compact(raw))
		}
		var c v2Codec
		if err := json.Unmarshal(m[uriKey], &c.id); err != nil || c.id == "" {
			return fmt.Errorf("%w: %s %s has no %q", ErrInvalidMetadata, what, compact(raw), uriKey)
		}
		delete(m, uriKey)
		c.cfg = m
		if !inline {
			c.cfg = codec.Config{}
			if cfg, ok := m["configuration"]; ok && string(cfg) != "null" {
				if err := json.Unmarshal(cfg, &c.cfg); err != nil || c.cfg == nil {
					return fmt.Errorf("%w: %s configuration %s is not an object", ErrInvalidMetadata, what, compact(cfg))
				}
			}
		}
		out = append(out, c)
		return nil
	}
	if raw, ok := obj["compressor"]; ok && string(raw) != "null" {
		if err := one("compressor", raw, "codec", false); err != nil {
			return nil, err
		}
	}
	for _, m := range []struct {
		member, uriKey string
		inline         bool
	}{{"chunk_codecs", "codec", true}, {"codecs", "type", false}} {
		raw, ok := obj[m.member]
		if !ok || string(raw) == "null" {
			continue
		}
		var list []json.RawMessage
		if err := json.Unmarshal(raw, &list); err != nil {
			return nil, fmt.Errorf("%w: %s %s is not a list", ErrInvalidMetadata, m.member, compact(raw))
		}
		for i, r := range list {
			if err := one(fmt.Sprintf("%s[%d]", m.member, i), r, m.uriKey, m.inline); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// draftFilters returns the numcodecs filters zarr-python 2.13 keeps in the
// "filters" attribute of a draft array (its object codec among them).
func draftFilters(attrs json.RawMessage) ([]v2Codec, error) {
	var a struct {
		Filters []json.RawMessage `json:"filters"`
	}
	if attrs == nil || json.Unmarshal(attrs, &a) != nil {
		return nil, nil
	}
	var out []v2Codec
	for i, r := range a.Filters {
		c, err := parseV2Codec(fmt.Sprintf("attributes filters[%d]", i), r)
		if err != nil {
			return nil, err
		}
		out = append(out, c)
	}
	return out, nil
}

// draftChain builds the codec chain of a draft array: a transpose for F
// chunk memory layout, then the codecs in order, with the bytes codec in
// the data type's byte order unless a codec (the 2022 draft's endian
// codec) serialises the array itself.
func draftChain(dt dtype, rank int, order string, specs []v2Codec) ([]codec.Codec, error) {
	var head, tail []codec.Codec
	var a2b codec.Codec
	if order == "F" && rank > 1 {
		t, err := transposeCodec(rank)
		if err != nil {
			return nil, err
		}
		head = append(head, t)
	}
	for _, s := range specs {
		c, err := codec.New(s.id, s.cfg)
		if err != nil {
			return nil, err
		}
		switch c.(type) {
		case codec.ArrayToArray:
			if a2b != nil || len(tail) > 0 {
				// (a2b is nil when only bytes→bytes codecs came before.)
				return nil, fmt.Errorf("%w: array→array codec %q after the array is serialised", ErrInvalidMetadata, s.id)
			}
			head = append(head, c)
		case codec.ArrayToBytes:
			if a2b != nil || len(tail) > 0 || dt.bigEndian {
				return nil, fmt.Errorf("%w: codec %q: the array is already serialised", ErrInvalidMetadata, s.id)
			}
			a2b = c
		default:
			tail = append(tail, c)
		}
	}
	if a2b == nil {
		var err error
		if a2b, err = bytesCodec(dt, dt.bigEndian); err != nil {
			return nil, err
		}
	}
	return append(append(head, a2b), tail...), nil
}

// parseDraftDataType parses a draft data_type: a NumPy type string ("<f8",
// ">i2", "|S7", "<U3"), a v3 core name ("float64", "r16"), or an extension
// object {"extension": URI, "type": …, "fallback": …} whose type is one of
// those (datetimes "<M8[ns]", complex "<c8") or a v2 structured field
// list, else its first understood fallback.
func parseDraftDataType(raw json.RawMessage) (dtype, error) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return draftTypeName(s)
	}
	var ext struct {
		Extension string          `json:"extension"`
		Type      json.RawMessage `json:"type"`
		Fallback  json.RawMessage `json:"fallback"`
	}
	if err := json.Unmarshal(raw, &ext); err != nil || ext.Type == nil {
		return dtype{}, fmt.Errorf("%w: data_type %s is neither a name nor an extension object", ErrInvalidMetadata, compact(raw))
	}
	first := codec.Unsupportedf("data type %s of extension %q", compact(ext.Type), ext.Extension)
	var fields []json.RawMessage
	if json.Unmarshal(ext.Type, &fields) == nil {
		// A structured type as zarr-python 2.13 writes it: the v2 field list.
		return parseStructured(ext.Type)
	}
	if json.Unmarshal(ext.Type, &s) == nil {
		t, err := draftTypeName(s)
		if err == nil {
			return t, nil
		}
		if !errors.Is(err, codec.ErrUnsupported) {
			return dtype{}, err
		}
	}
	var fallbacks []string
	if json.Unmarshal(ext.Fallback, &s) == nil {
		fallbacks = []string{s}
	} else if ext.Fallback != nil && string(ext.Fallback) != "null" && json.Unmarshal(ext.Fallback, &fallbacks) != nil {
		return dtype{}, fmt.Errorf("%w: data_type fallback %s is neither a name nor a list of names", ErrInvalidMetadata, compact(ext.Fallback))
	}
	for _, f := range fallbacks {
		if t, err := draftTypeName(f); err == nil {
			return t, nil
		}
	}
	return dtype{}, first
}

// draftTypeName parses a NumPy type string or a v3 core data type name.
func draftTypeName(s string) (dtype, error) {
	if s != "" && (s[0] == '<' || s[0] == '>' || s[0] == '|') {
		return parseTypestr(s)
	}
	b, _ := json.Marshal(s)
	t, err := parseV3DataType(b)
	if errors.Is(err, codec.ErrUnsupported) {
		// NumPy's one-byte types without a byte order, as zarr-python
		// 2.13 writes them ("u1", "i1").
		if t1, err1 := parseTypestr("|" + s); err1 == nil && t1.Size == 1 {
			return t1, nil
		}
	}
	return t, err
}

// binaryToHex rewrites the JSON strings "0b…" of a fill value (a string or
// a list of them) as the equivalent "0x…" (four bits a digit); anything
// else is left for the fill value parser to judge.
func binaryToHex(raw json.RawMessage) json.RawMessage {
	conv := func(s string) (string, bool) {
		bits, ok := strings.CutPrefix(s, "0b")
		if !ok || len(bits) == 0 || len(bits)%8 != 0 || strings.Trim(bits, "01") != "" {
			return "", false
		}
		var b strings.Builder
		b.WriteString("0x")
		for i := 0; i < len(bits); i += 4 {
			v, _ := strconv.ParseUint(bits[i:i+4], 2, 8)
			b.WriteString(strconv.FormatUint(v, 16))
		}
		return b.String(), true
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if h, ok := conv(s); ok {
			out, _ := json.Marshal(h)
			return out
		}
		return raw
	}
	var parts []json.RawMessage
	if json.Unmarshal(raw, &parts) != nil {
		return raw
	}
	changed := false
	for i, p := range parts {
		if json.Unmarshal(p, &s) == nil {
			if h, ok := conv(s); ok {
				parts[i], _ = json.Marshal(h)
				changed = true
			}
		}
	}
	if !changed {
		return raw
	}
	out, _ := json.Marshal(parts)
	return out
}
