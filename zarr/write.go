package zarr

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"slices"

	"golang.org/x/sync/errgroup"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/internal/nd"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/zarr/meta"
)

// writeCacheSize is the decoded-chunk cache of an array returned by CreateArray.
const writeCacheSize = 64 << 20

// marshalDoc serialises a metadata document as zarr-python does: indented,
// without HTML escaping, with no newline at the end.
func marshalDoc(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// jsonValue turns float special values into their Zarr spellings.
func jsonValue(v any) any {
	switch f := v.(type) {
	case float64:
		return jsonFloat(f)
	case float32:
		return jsonFloat(float64(f))
	}
	return v
}

// jsonFloat returns f as a JSON value the way zarr writes fill values.
func jsonFloat(f float64) any {
	if s := codec.NonFiniteName(f); s != "" {
		return s
	}
	return f
}

// WritableStore is a store that can also be changed.
type WritableStore interface {
	store.Store
	store.Writer
}

// GroupMeta describes a group to create.
type GroupMeta struct {
	Format     Format
	Attributes map[string]any
}

// CodecSpec names a codec and its configuration.
type CodecSpec struct {
	Name          string
	Configuration map[string]any
}

// ArrayMeta describes an array to create.
type ArrayMeta struct {
	Format     Format
	Shape      []int64
	ChunkShape []int64
	// DataType is a v3 data type name ("float32") or, for FormatV2, a NumPy
	// type string (">i2").
	DataType  string
	FillValue any
	// Order is the v2 memory order of chunks, "C" (default) or "F".
	Order string
	// DimensionSeparator is the v2 chunk key separator, "." (default) or "/".
	DimensionSeparator string
	// ChunkKeyEncoding is the v3 chunk key encoding, "default" or "v2",
	// with Separator ("/" by default for "default", "." for "v2").
	ChunkKeyEncoding string
	Separator        string
	// Codecs is the v3 codec pipeline; nil means [bytes little-endian].
	Codecs []CodecSpec
	// Filters and Compressor are the v2 chain.
	Filters        []CodecSpec
	Compressor     *CodecSpec
	DimensionNames []string
	Attributes     map[string]any
}

// CreateGroup writes the metadata of a group at path (v2: .zgroup and
// .zattrs when there are attributes; v3: zarr.json). Format 0 means v3.
func CreateGroup(ctx context.Context, st WritableStore, path string, g GroupMeta) error {
	p, err := CleanPath(path)
	if err != nil {
		return err
	}
	attrs := g.Attributes
	if attrs == nil {
		attrs = map[string]any{}
	}
	docs := map[string][]byte{}
	switch g.Format {
	case FormatV2:
		if docs[v2GroupDoc], err = marshalDoc(map[string]any{"zarr_format": 2}, "    "); err != nil {
			return err
		}
		if len(g.Attributes) > 0 {
			if docs[v2AttrsDoc], err = marshalDoc(attrs, "    "); err != nil {
				return fmt.Errorf("group %q: attributes: %w", "/"+p, err)
			}
		}
	case FormatV3, 0:
		doc := struct {
			Attributes map[string]any `json:"attributes"`
			ZarrFormat int            `json:"zarr_format"`
			NodeType   string         `json:"node_type"`
		}{attrs, 3, "group"}
		if docs[v3Doc], err = marshalDoc(doc, "  "); err != nil {
			return fmt.Errorf("group %q: %w", "/"+p, err)
		}
	default:
		return fmt.Errorf("group %q: %w: writing format %d", "/"+p, ErrUnsupported, g.Format)
	}
	return writeDocs(ctx, st, p, docs)
}

// writeDocs stores documents below p in a fixed order.
func writeDocs(ctx context.Context, st WritableStore, p string, docs map[string][]byte) error {
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := st.Set(ctx, store.Join(p, n), docs[n]); err != nil {
			return fmt.Errorf("%s: writing %s: %w", st, store.Join(p, n), err)
		}
	}
	return nil
}

// v2CodecJSON returns a numcodecs codec object for spec.
func v2CodecJSON(c CodecSpec) map[string]any {
	m := map[string]any{"id": c.Name}
	for k, v := range c.Configuration {
		m[k] = v
	}
	return m
}

// v3CodecJSON returns a v3 codec object for spec.
func v3CodecJSON(c CodecSpec) meta.CodecJSON {
	if c.Configuration == nil {
		return meta.CodecJSON{Name: c.Name}
	}
	return meta.CodecJSON{Name: c.Name, Configuration: c.Configuration}
}

// CreateArray writes the metadata of an array at path, as zarr-python
// would, and returns the array ready for writing. The metadata is checked
// by parsing it back; an unsupported codec or data type is an error.
func CreateArray(ctx context.Context, st WritableStore, path string, m ArrayMeta) (*Array, error) {
	p, err := CleanPath(path)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Array, error) {
		return nil, fmt.Errorf("%s: array %q: %w", st, "/"+p, err)
	}
	docs := map[string][]byte{}
	var a *Array
	switch m.Format {
	case FormatV2:
		doc := map[string]any{
			"zarr_format": 2, "shape": m.Shape, "chunks": m.ChunkShape, "dtype": m.DataType,
			"fill_value": jsonValue(m.FillValue), "order": cmp(m.Order, "C"),
			"dimension_separator": cmp(m.DimensionSeparator, "."),
			"compressor":          nil, "filters": nil,
		}
		if m.Compressor != nil {
			doc["compressor"] = v2CodecJSON(*m.Compressor)
		}
		if len(m.Filters) > 0 {
			var fs []any
			for _, f := range m.Filters {
				fs = append(fs, v2CodecJSON(f))
			}
			doc["filters"] = fs
		}
		if docs[v2ArrayDoc], err = marshalDoc(doc, "    "); err != nil {
			return fail(err)
		}
		attrs := m.Attributes
		if len(m.DimensionNames) > 0 {
			attrs = maps2(attrs)
			attrs["_ARRAY_DIMENSIONS"] = m.DimensionNames
		}
		var attrsDoc json.RawMessage
		if len(attrs) > 0 {
			if docs[v2AttrsDoc], err = marshalDoc(attrs, "    "); err != nil {
				return fail(err)
			}
			attrsDoc = docs[v2AttrsDoc]
		}
		if a, err = newArray(meta.ParseV2Array(docs[v2ArrayDoc], attrsDoc)); err != nil {
			return fail(err)
		}
	case FormatV3, 0:
		codecs := []any{}
		for _, c := range m.Codecs {
			codecs = append(codecs, v3CodecJSON(c))
		}
		if len(codecs) == 0 {
			codecs = append(codecs, v3CodecJSON(CodecSpec{Name: "bytes", Configuration: map[string]any{"endian": "little"}}))
		}
		enc := map[string]any{"name": "default", "configuration": map[string]any{"separator": cmp(m.Separator, "/")}}
		if m.ChunkKeyEncoding == "v2" {
			enc = map[string]any{"name": "v2", "configuration": map[string]any{"separator": cmp(m.Separator, ".")}}
		}
		attrs := m.Attributes
		if attrs == nil {
			attrs = map[string]any{}
		}
		doc := struct {
			Shape               []int64        `json:"shape"`
			DataType            string         `json:"data_type"`
			ChunkGrid           any            `json:"chunk_grid"`
			ChunkKeyEncoding    any            `json:"chunk_key_encoding"`
			FillValue           any            `json:"fill_value"`
			Codecs              []any          `json:"codecs"`
			Attributes          map[string]any `json:"attributes"`
			ZarrFormat          int            `json:"zarr_format"`
			NodeType            string         `json:"node_type"`
			StorageTransformers []any          `json:"storage_transformers"`
			DimensionNames      []string       `json:"dimension_names,omitempty"`
		}{
			m.Shape, m.DataType,
			map[string]any{"name": "regular", "configuration": map[string]any{"chunk_shape": m.ChunkShape}},
			enc, jsonValue(m.FillValue), codecs, attrs, 3, "array", []any{}, m.DimensionNames,
		}
		if docs[v3Doc], err = marshalDoc(doc, "  "); err != nil {
			return fail(err)
		}
		v, err := meta.ParseV3Node(docs[v3Doc])
		if err != nil {
			return fail(err)
		}
		if a, err = newArray(meta.ParseV3Array(v)); err != nil {
			return fail(err)
		}
	default:
		return fail(fmt.Errorf("%w: writing format %d", ErrUnsupported, m.Format))
	}
	if a.Err != nil {
		return fail(a.Err)
	}
	if err := writeDocs(ctx, st, p, docs); err != nil {
		return nil, err
	}
	a.bind(st, p, newChunkCache(writeCacheSize))
	return a, nil
}

// cmp returns s, or def when s is empty.
func cmp(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// maps2 returns a copy of m (a new map when m is nil).
func maps2(m map[string]any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for k, v := range m {
		out[k] = v
	}
	return out
}

// writable reports why the array cannot be written, if it cannot.
func (a *Array) writable() (WritableStore, error) {
	if err := a.readable(); err != nil {
		return nil, err
	}
	if a.Variable() {
		return nil, fmt.Errorf("array %q: %w: writing variable-length elements", "/"+a.path, ErrUnsupported)
	}
	if a.Layout().Rectilinear() {
		return nil, fmt.Errorf("array %q: %w: writing a rectilinear chunk grid", "/"+a.path, ErrUnsupported)
	}
	w, ok := a.st.(WritableStore)
	if !ok {
		return nil, fmt.Errorf("%s: array %q: %w", a.st, "/"+a.path, store.ErrReadOnly)
	}
	return w, nil
}

// updateChunk replaces the chunk at key by what modify makes of it:
// modify gets the current decoded chunk (or the fill value when fresh is
// set or the chunk is missing) and changes it in place.
func (a *Array) updateChunk(ctx context.Context, w WritableStore, lin int64, fresh bool, modify func(chunk []byte)) error {
	key := a.chunkKeyAt(lin)
	item := int64(a.DataType().Size)
	chunk := make([]byte, a.Layout().ChunkElems()*item)
	if fresh {
		a.FillElements(chunk)
	} else {
		v, err := a.loadChunk(ctx, lin)
		if err != nil {
			return err
		}
		if v.missing {
			a.FillElements(chunk)
		} else {
			copy(chunk, v.fixed)
		}
	}
	modify(chunk)
	enc, err := a.Pipeline().Encode(chunk)
	if err != nil {
		return a.chunkError(key, err)
	}
	err = w.Set(ctx, key, enc)
	if a.cache != nil {
		a.cache.remove(a.cacheID(lin), func() { a.writes.Add(1) })
	}
	if err != nil {
		return a.chunkError(key, err)
	}
	return nil
}

// WriteAt writes p into the logical content at off, reading, modifying
// and rewriting the chunks it covers partly. It writes nothing past the
// end of the array (that is an error).
func (a *Array) WriteAt(ctx context.Context, p []byte, off int64) (int, error) {
	w, err := a.writable()
	if err != nil {
		return 0, err
	}
	if off < 0 || off > a.Size() || int64(len(p)) > a.Size()-off {
		return 0, fmt.Errorf("array %q: write of %d bytes at %d is outside its %d bytes", "/"+a.path, len(p), off, a.Size())
	}
	if len(p) == 0 {
		return 0, nil
	}
	a.writeMu.Lock()
	defer a.writeMu.Unlock()
	item := int64(a.DataType().Size)
	end := off + int64(len(p))
	e0, e1 := off/item, (end-1)/item+1
	buf := p
	if off%item != 0 || end%item != 0 {
		buf = make([]byte, (e1-e0)*item)
		if _, err := a.ReadAt(ctx, buf[:item], e0*item); err != nil {
			return 0, err
		}
		if _, err := a.ReadAt(ctx, buf[len(buf)-int(item):], (e1-1)*item); err != nil {
			return 0, err
		}
		copy(buf[off-e0*item:], p)
	}
	var order []int64
	byChunk := map[int64][]run{}
	err = a.runs(e0, e1, func(r run) error {
		if _, ok := byChunk[r.chunk]; !ok {
			order = append(order, r.chunk)
		}
		byChunk[r.chunk] = append(byChunk[r.chunk], r)
		return nil
	})
	if err != nil {
		return 0, err
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	for _, c := range order {
		runs := byChunk[c]
		covered := int64(0)
		for _, r := range runs {
			covered += r.n
		}
		g.Go(func() error {
			return a.updateChunk(gctx, w, c, covered == runs[0].valid, func(chunk []byte) {
				for _, r := range runs {
					copy(chunk[r.inOff*item:(r.inOff+r.n)*item], buf[(r.outOff-e0)*item:])
				}
			})
		})
	}
	if err := g.Wait(); err != nil {
		return 0, err
	}
	return len(p), nil
}

// WriteRegion writes data (C order, little-endian elements) into the box
// of the array that starts at start and has the given shape.
func (a *Array) WriteRegion(ctx context.Context, start, shape []int64, data []byte) error {
	w, err := a.writable()
	if err != nil {
		return err
	}
	dims, chunks := a.Shape(), a.ChunkShape()
	r := len(dims)
	if len(start) != r || len(shape) != r {
		return fmt.Errorf("array %q: region start %v and shape %v must have rank %d", "/"+a.path, start, shape, r)
	}
	for i := range r {
		if start[i] < 0 || shape[i] < 0 || start[i] > dims[i] || shape[i] > dims[i]-start[i] {
			return fmt.Errorf("array %q: region at %v of shape %v is outside shape %v", "/"+a.path, start, shape, dims)
		}
	}
	item := int64(a.DataType().Size)
	n, err := meta.Product("region shape", shape, item)
	if err != nil || n != int64(len(data)) {
		return fmt.Errorf("array %q: region of shape %v needs %d bytes, got %d", "/"+a.path, shape, n, len(data))
	}
	if n == 0 && r > 0 {
		return nil
	}
	a.writeMu.Lock()
	defer a.writeMu.Unlock()
	first, last := make([]int64, r), make([]int64, r)
	for i := range r {
		first[i] = start[i] / chunks[i]
		last[i] = (start[i] + shape[i] - 1) / chunks[i]
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(runtime.GOMAXPROCS(0))
	cidx := slices.Clone(first)
	for {
		c := slices.Clone(cidx)
		// The part of the region in chunk c: size elements at inChunk
		// of the chunk and at inData of data.
		inChunk, inData, size := make([]int64, r), make([]int64, r), make([]int64, r)
		fresh := true
		for i := range r {
			origin := c[i] * chunks[i]
			lo := max(start[i], origin)
			hi := min(start[i]+shape[i], origin+chunks[i])
			inChunk[i], inData[i], size[i] = lo-origin, lo-start[i], hi-lo
			if lo != origin || hi != min(origin+chunks[i], dims[i]) {
				fresh = false
			}
		}
		g.Go(func() error {
			return a.updateChunk(gctx, w, a.Layout().Linear(c), fresh, func(chunk []byte) {
				nd.Copy(chunk, chunks, inChunk, data, shape, inData, size, item)
			})
		})
		if !nd.Next(cidx, first, last) {
			break
		}
	}
	return g.Wait()
}
