package kerchunk

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/bits"
	"strconv"
	"strings"
	"sync"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"

	"github.com/zarrfs/zarrfs/store"
)

// A Parquet reference directory, as fsspec's LazyReferenceMapper (which
// kerchunk's refs_to_dataframe and VirtualiZarr use) writes it:
//
//	.zmetadata            {"metadata": {".zgroup": {…}, "x/.zarray": {…}, …}, "record_size": N}
//	x/refs.0.parq         the references of chunks 0 … N−1 of the array x
//	x/refs.1.parq         chunks N … 2N−1, …
//
// A chunk's number is its index in the chunk grid in C order; its row is
// that number modulo N. A row's columns: raw (the bytes, when inline),
// path (the target URL; null: no chunk), offset and size (both 0: the
// whole file). Record files are read when a chunk in them is first asked
// for and kept, up to maxRecordBytes of them.

// MaxParquetFile bounds the size of one refs.N.parq file.
const MaxParquetFile = 256 << 20

// maxRecordBytes bounds the decoded records kept.
const maxRecordBytes = 64 << 20

// IsParquetIndex reports whether doc, the .zmetadata of a folder, is
// that of a Parquet reference directory: a JSON object with "metadata"
// and "record_size". A document without the words "record_size" is not
// decoded: the .zmetadata of a large hierarchy (tens of megabytes) would
// be copied whole into the map.
func IsParquetIndex(doc []byte) bool {
	if !MayBeParquetIndex(doc) {
		return false
	}
	var top map[string]json.RawMessage
	if json.Unmarshal(doc, &top) != nil {
		return false
	}
	_, ok1 := top["metadata"]
	_, ok2 := top["record_size"]
	return ok1 && ok2
}

// MayBeParquetIndex reports whether doc, a .zmetadata document or a part
// of one, names "record_size", as a Parquet reference index does: one
// that does not is no index (IsParquetIndex tells a whole one).
func MayBeParquetIndex(doc []byte) bool {
	return bytes.Contains(doc, []byte(`"record_size"`))
}

// OpenParquet opens the Parquet reference directory held by dir, whose
// .zmetadata document is index.
func OpenParquet(index []byte, dir store.Store, opts Options) (*Store, error) {
	s := newStore(opts)
	var top struct {
		Metadata   map[string]json.RawMessage `json:"metadata"`
		RecordSize json.RawMessage            `json:"record_size"`
	}
	if err := json.Unmarshal(index, &top); err != nil || top.Metadata == nil {
		return nil, fmt.Errorf("%s: .zmetadata: %w (no \"metadata\" object)", s, ErrNotReferences)
	}
	rs, err := jsonInt(top.RecordSize)
	if err != nil || rs <= 0 {
		return nil, fmt.Errorf("%s: .zmetadata: %w: record_size %.40s", s, ErrNotReferences, top.RecordSize)
	}
	pq := &parquetRefs{dir: dir, recordSize: rs, arrays: map[string]*pqArray{}, records: map[recordKey]*record{}}
	for k, v := range top.Metadata {
		if store.ValidateKey(k) != nil {
			continue
		}
		s.refs[k] = ref{inline: true, data: bytes.Clone(v)}
		if field, ok := strings.CutSuffix(k, "/.zarray"); ok {
			pq.arrays[field] = parseGrid(v)
		}
	}
	s.pq, s.kind = pq, "Parquet"
	s.finish()
	return s, nil
}

// pqArray is the chunk grid of one array.
type pqArray struct {
	counts []int64 // chunks along each dimension; [1] for a scalar
	err    error   // the grid cannot be read from .zarray
}

func parseGrid(zarray []byte) *pqArray {
	var m struct {
		Shape  []int64 `json:"shape"`
		Chunks []int64 `json:"chunks"`
	}
	if err := json.Unmarshal(zarray, &m); err != nil {
		return &pqArray{err: fmt.Errorf(".zarray: %v", err)}
	}
	if len(m.Shape) != len(m.Chunks) {
		return &pqArray{err: errors.New(".zarray: shape and chunks differ in length")}
	}
	a := &pqArray{counts: []int64{1}}
	if len(m.Shape) > 0 {
		a.counts = make([]int64, len(m.Shape))
	}
	for i := range m.Shape {
		if m.Shape[i] < 0 || m.Chunks[i] <= 0 {
			return &pqArray{err: fmt.Errorf(".zarray: shape %v, chunks %v", m.Shape, m.Chunks)}
		}
		a.counts[i] = (m.Shape[i] + m.Chunks[i] - 1) / m.Chunks[i]
	}
	return a
}

// number returns the C-order number of the chunk whose key (the part after
// the array's folder) is chunk: "i.j.k", "0" for a scalar; ok is false for
// a name that is no chunk of the grid.
func (a *pqArray) number(chunk string) (n int64, ok bool) {
	parts := strings.Split(chunk, ".")
	if len(parts) != len(a.counts) {
		return 0, false
	}
	for i, p := range parts {
		c, err := strconv.ParseInt(p, 10, 64)
		if err != nil || c < 0 || c >= a.counts[i] || strconv.FormatInt(c, 10) != p {
			return 0, false
		}
		hi, lo := bits.Mul64(uint64(n), uint64(a.counts[i]))
		if hi != 0 || lo+uint64(c) < lo || lo+uint64(c) > 1<<62 {
			return 0, false
		}
		n = int64(lo) + c
	}
	return n, true
}

type parquetRefs struct {
	dir        store.Store
	recordSize int64
	arrays     map[string]*pqArray

	mu      sync.Mutex
	records map[recordKey]*record
	order   []recordKey // loaded records, oldest first
	bytes   int64       // their estimated size
}

type recordKey struct {
	field string
	n     int64
}

// record is one refs.N.parq file, decoded.
type record struct {
	done chan struct{}
	rows []ref
	err  error
	size int64
}

// lookup returns the reference of a chunk key.
func (pq *parquetRefs) lookup(ctx context.Context, s *Store, key string) (ref, error) {
	i := strings.LastIndexByte(key, '/')
	if i < 0 {
		return ref{}, store.ErrNotExist
	}
	a := pq.arrays[key[:i]]
	if a == nil {
		return ref{}, store.ErrNotExist
	}
	if a.err != nil {
		return ref{}, fmt.Errorf("%w: %v", ErrBadReference, a.err)
	}
	n, ok := a.number(key[i+1:])
	if !ok {
		return ref{}, store.ErrNotExist
	}
	rec, err := pq.record(ctx, recordKey{key[:i], n / pq.recordSize})
	if err != nil {
		return ref{}, err
	}
	row := n % pq.recordSize
	if row >= int64(len(rec.rows)) {
		return ref{}, store.ErrNotExist
	}
	rf := rec.rows[row]
	if rf.err != nil {
		return ref{}, rf.err
	}
	if !rf.inline && rf.url == "" {
		return ref{}, store.ErrNotExist
	}
	return rf, nil
}

// record returns the decoded record k, reading it once. A load that
// failed because its caller went away is tried again by the next.
func (pq *parquetRefs) record(ctx context.Context, k recordKey) (*record, error) {
	for {
		r, err, loaded := pq.recordOnce(ctx, k)
		if err != nil && !loaded && ctx.Err() == nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
			continue // another caller's load, cut short by its context
		}
		return r, err
	}
}

// recordOnce returns the record k, loading it when no other caller is
// (loaded: this call did).
func (pq *parquetRefs) recordOnce(ctx context.Context, k recordKey) (_ *record, _ error, loaded bool) {
	pq.mu.Lock()
	r := pq.records[k]
	if r == nil {
		r = &record{done: make(chan struct{})}
		pq.records[k] = r
		pq.mu.Unlock()
		r.rows, r.size, r.err = pq.load(ctx, k)
		close(r.done)
		pq.mu.Lock()
		if r.err != nil {
			delete(pq.records, k) // errors are not kept
		} else {
			pq.order = append(pq.order, k)
			pq.bytes += r.size
			for pq.bytes > maxRecordBytes && len(pq.order) > 1 {
				old := pq.order[0]
				pq.order = pq.order[1:]
				if o := pq.records[old]; o != nil {
					pq.bytes -= o.size
					delete(pq.records, old)
				}
			}
		}
		pq.mu.Unlock()
		return r, r.err, true
	}
	pq.mu.Unlock()
	select {
	case <-r.done:
		return r, r.err, false
	case <-ctx.Done():
		return nil, ctx.Err(), false
	}
}

// load reads and decodes the record file of k.
func (pq *parquetRefs) load(ctx context.Context, k recordKey) ([]ref, int64, error) {
	name := store.Join(k.field, "refs."+strconv.FormatInt(k.n, 10)+".parq")
	b, err := pq.dir.GetRange(ctx, name, store.Range(0, MaxParquetFile+1))
	if errors.Is(err, store.ErrNotExist) {
		// No record file: none of its chunks was written (fsspec's
		// writer leaves out records with no references).
		return nil, 0, nil
	}
	if err != nil {
		return nil, 0, err
	}
	if len(b) > MaxParquetFile {
		return nil, 0, fmt.Errorf("%w: %s is larger than %d bytes", ErrBadReference, name, MaxParquetFile)
	}
	rows, size, err := decodeRecord(b, pq.recordSize)
	if err != nil {
		return nil, 0, fmt.Errorf("%w: %s: %v", ErrBadReference, name, err)
	}
	return rows, size, nil
}

// decodeRecord decodes the rows of one refs.N.parq file, at most max of
// them.
func decodeRecord(b []byte, max int64) (rows []ref, size int64, err error) {
	defer func() {
		// The Parquet library checks most of what it reads; a panic on
		// a corrupt file is turned into an error all the same.
		if p := recover(); p != nil {
			rows, size, err = nil, 0, fmt.Errorf("corrupt Parquet file: %v", p)
		}
	}()
	// The library allocates the footer length the file's last bytes
	// claim (up to 4 GiB) before reading it: check it against the file.
	if len(b) < 12 || string(b[:4]) != "PAR1" || string(b[len(b)-4:]) != "PAR1" {
		return nil, 0, errors.New("not a Parquet file")
	}
	if footer := binary.LittleEndian.Uint32(b[len(b)-8:]); uint64(footer)+12 > uint64(len(b)) {
		return nil, 0, fmt.Errorf("a footer of %d bytes in a file of %d", footer, len(b))
	}
	f, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		return nil, 0, err
	}
	if f.NumRows() > max {
		return nil, 0, fmt.Errorf("%d rows, more than record_size %d", f.NumRows(), max)
	}
	if err := checkPages(b, f.Metadata()); err != nil {
		return nil, 0, err
	}
	col := func(name string) int {
		if leaf, ok := f.Schema().Lookup(name); ok && leaf.MaxRepetitionLevel == 0 {
			return leaf.ColumnIndex
		}
		return -1
	}
	cPath, cOff, cSize, cRaw := col("path"), col("offset"), col("size"), col("raw")
	if cPath < 0 && cRaw < 0 {
		return nil, 0, errors.New("neither a path nor a raw column")
	}
	rows = make([]ref, 0, f.NumRows())
	size = 64 * int64(cap(rows))
	urls := map[string]string{}
	buf := make([]parquet.Row, 256)
	for _, rg := range f.RowGroups() {
		rr := rg.Rows()
		for {
			n, rerr := rr.ReadRows(buf)
			for _, row := range buf[:n] {
				if int64(len(rows)) >= max {
					rr.Close()
					return nil, 0, fmt.Errorf("more than record_size %d rows", max)
				}
				rows = append(rows, rowRef(row, cPath, cOff, cSize, cRaw, urls, &size))
			}
			if rerr == io.EOF {
				break
			}
			if rerr != nil {
				rr.Close()
				return nil, 0, rerr
			}
		}
		rr.Close()
	}
	return rows, size, nil
}

// rowRef turns one row into a reference (url "" and not inline: no chunk).
func rowRef(row parquet.Row, cPath, cOff, cSize, cRaw int, urls map[string]string, size *int64) ref {
	var rf ref
	var off, n int64
	var havePath bool
	for _, v := range row {
		switch c := v.Column(); {
		case c == cRaw && !v.IsNull():
			rf.inline, rf.data = true, bytes.Clone(v.ByteArray())
			*size += int64(len(rf.data))
		case c == cPath && !v.IsNull():
			p := v.ByteArray()
			u, ok := urls[string(p)]
			if !ok {
				u = string(p)
				urls[u] = u
				*size += int64(len(u))
			}
			rf.url, havePath = u, true
		case c == cOff && !v.IsNull():
			off = v.Int64()
		case c == cSize && !v.IsNull():
			n = v.Int64()
		}
	}
	if rf.inline {
		rf.url = ""
		return rf
	}
	if !havePath {
		return ref{}
	}
	if off == 0 && n == 0 {
		rf.n = -1 // the whole file
		return rf
	}
	if err := checkRange(off, n); err != nil {
		return ref{err: fmt.Errorf("%w: %v", ErrBadReference, err)}
	}
	rf.off, rf.n = off, n
	return rf
}

// maxPage and maxPages bound what the page headers of one record file may
// claim, checked before the Parquet library reads the pages (it allocates
// the sizes that a page header claims).
const (
	maxPage  = 64 << 20
	maxPages = 1 << 16
)

// checkPages walks the page headers of every column chunk of a file and
// refuses sizes past the chunk or the bounds above.
func checkPages(b []byte, md *format.FileMetaData) error {
	pages := 0
	var total int64
	for _, rg := range md.RowGroups {
		for _, cc := range rg.Columns {
			m := cc.MetaData
			start := m.DataPageOffset
			if m.DictionaryPageOffset > 0 && m.DictionaryPageOffset < start {
				start = m.DictionaryPageOffset
			}
			switch m.Codec {
			case format.Uncompressed, format.Snappy, format.Gzip, format.Zstd:
			default:
				// What fastparquet and pyarrow write for kerchunk; the
				// library's LZ4 decoder grows its output without bound
				// on a corrupt page.
				return fmt.Errorf("compression %v is not read (kerchunk writes zstd)", m.Codec)
			}
			end := start + m.TotalCompressedSize
			if start < 0 || m.TotalCompressedSize < 0 || end < start || end > int64(len(b)) {
				return fmt.Errorf("column chunk at %d of %d bytes is outside the file", start, m.TotalCompressedSize)
			}
			for pos := start; pos < end; {
				if pages++; pages > maxPages {
					return fmt.Errorf("more than %d pages", maxPages)
				}
				var h format.PageHeader
				compact := &thrift.CompactProtocol{}
				r := compact.NewReaderFromBytes(b[pos:end])
				if err := thrift.NewDecoder(r).Decode(&h); err != nil {
					return fmt.Errorf("page header at %d: %v", pos, err)
				}
				n := int64(h.CompressedPageSize)
				if n < 0 || h.UncompressedPageSize < 0 || h.UncompressedPageSize > maxPage || pos+int64(r.BytesRead())+n > end {
					return fmt.Errorf("page at %d claims %d bytes (%d uncompressed) in a column chunk ending at %d",
						pos, n, h.UncompressedPageSize, end)
				}
				if total += int64(h.UncompressedPageSize); total > 4*maxPage {
					return fmt.Errorf("pages of more than %d bytes in all", 4*maxPage)
				}
				page := b[pos+int64(r.BytesRead()) : pos+int64(r.BytesRead())+n]
				if v2 := h.DataPageHeaderV2.V; h.Type == format.DataPageV2 {
					levels := int64(v2.DefinitionLevelsByteLength) + int64(v2.RepetitionLevelsByteLength)
					if levels < 0 || levels > n {
						return fmt.Errorf("page at %d: levels of %d bytes", pos, levels)
					}
					page = page[levels:]
				}
				if err := checkDecoded(m.Codec, page); err != nil {
					return fmt.Errorf("page at %d: %v", pos, err)
				}
				pos += int64(r.BytesRead()) + n
			}
		}
	}
	return nil
}

// pageDecoder checks zstd pages; its memory is bounded by maxPage.
var pageDecoder, _ = zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(maxPage))

// checkDecoded checks that a compressed page decodes to at most maxPage
// bytes (the library would decode it without bound).
func checkDecoded(codec format.CompressionCodec, page []byte) error {
	switch codec {
	case format.Snappy:
		n, k := binary.Uvarint(page)
		if k <= 0 || n > maxPage {
			return fmt.Errorf("snappy block of %d bytes", n)
		}
	case format.Zstd:
		if _, err := pageDecoder.DecodeAll(page, nil); err != nil {
			return fmt.Errorf("zstd: %v", err)
		}
	case format.Gzip:
		z, err := gzip.NewReader(bytes.NewReader(page))
		if err != nil {
			return err
		}
		n, err := io.Copy(io.Discard, io.LimitReader(z, maxPage+1))
		if err != nil || n > maxPage {
			return fmt.Errorf("gzip: %d bytes, %v", n, err)
		}
	}
	return nil
}
