// Package kerchunktest writes Parquet reference directories for tests, as
// fsspec's LazyReferenceMapper (kerchunk's refs_to_dataframe, VirtualiZarr)
// writes them. Debian packages no Parquet writer for Python (neither
// pyarrow nor fastparquet), so the tests convert the JSON references that
// their Python scripts write with this, following kerchunk's documented
// layout: .zmetadata {"metadata": {…}, "record_size": N} and, per array,
// refs.K.parq files of N rows each (chunk number modulo N, C order) with the
// columns path (UTF-8, nullable, dictionary-encoded as pandas' categories
// are), offset and size (int64) and raw (bytes, nullable), compressed with
// zstd.
package kerchunktest

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// Row is one row of a refs.K.parq file.
type Row struct {
	Path   *string `parquet:"path,optional,dict"`
	Offset int64   `parquet:"offset"`
	Size   int64   `parquet:"size"`
	Raw    []byte  `parquet:"raw,optional"`
}

// EncodeRecord writes rows as one Parquet file.
func EncodeRecord(rows []Row) ([]byte, error) {
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[Row](&buf, parquet.Compression(&zstd.Codec{}))
	if _, err := w.Write(rows); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// FromJSON converts a version 0 JSON reference set (refs: key to value as
// JSON) into the files of a Parquet reference directory (file name to
// contents), with recordSize rows per record file. Metadata documents
// (.zgroup, .zarray, .zattrs) go into .zmetadata as JSON objects; every
// other key must be a chunk of an array that has a .zarray.
func FromJSON(refs map[string]json.RawMessage, recordSize int) (map[string][]byte, error) {
	files := map[string][]byte{}
	metadata := map[string]json.RawMessage{}
	type grid struct{ counts []int64 }
	grids := map[string]grid{}
	for k, v := range refs {
		name := k[strings.LastIndexByte(k, '/')+1:]
		if !strings.HasPrefix(name, ".z") {
			continue
		}
		var doc string
		if err := json.Unmarshal(v, &doc); err != nil {
			return nil, fmt.Errorf("%s: metadata is not a string", k)
		}
		metadata[k] = json.RawMessage(doc)
		if field, ok := strings.CutSuffix(k, "/.zarray"); ok {
			var m struct{ Shape, Chunks []int64 }
			if err := json.Unmarshal([]byte(doc), &m); err != nil {
				return nil, err
			}
			g := grid{counts: []int64{1}}
			if len(m.Shape) > 0 {
				g.counts = nil
				for i := range m.Shape {
					g.counts = append(g.counts, (m.Shape[i]+m.Chunks[i]-1)/m.Chunks[i])
				}
			}
			grids[field] = g
		}
	}
	records := map[string]map[int64][]Row{}
	for k, v := range refs {
		if _, ok := metadata[k]; ok {
			continue
		}
		i := strings.LastIndexByte(k, '/')
		if i < 0 {
			return nil, fmt.Errorf("%s: a chunk key outside an array", k)
		}
		g, ok := grids[k[:i]]
		if !ok {
			return nil, fmt.Errorf("%s: no .zarray", k)
		}
		var n int64
		for d, p := range strings.Split(k[i+1:], ".") {
			c, err := strconv.ParseInt(p, 10, 64)
			if err != nil || d >= len(g.counts) {
				return nil, fmt.Errorf("%s: not a chunk key", k)
			}
			n = n*g.counts[d] + c
		}
		row, err := rowOf(v)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", k, err)
		}
		if records[k[:i]] == nil {
			records[k[:i]] = map[int64][]Row{}
		}
		rec := records[k[:i]]
		r := n / int64(recordSize)
		if rec[r] == nil {
			rec[r] = make([]Row, recordSize)
		}
		rec[r][n%int64(recordSize)] = row
	}
	for field, rec := range records {
		for r, rows := range rec {
			b, err := EncodeRecord(rows)
			if err != nil {
				return nil, err
			}
			files[field+"/refs."+strconv.FormatInt(r, 10)+".parq"] = b
		}
	}
	keys := make([]string, 0, len(metadata))
	for k := range metadata {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b bytes.Buffer
	b.WriteString(`{"metadata": {`)
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		kj, _ := json.Marshal(k)
		b.Write(kj)
		b.WriteString(": ")
		b.Write(metadata[k])
	}
	fmt.Fprintf(&b, `}, "record_size": %d}`, recordSize)
	files[".zmetadata"] = b.Bytes()
	return files, nil
}

// rowOf converts one JSON reference into a row, as kerchunk's
// LazyReferenceMapper.write does: inline bytes in raw (base64 decoded),
// [url] as path with offset and size 0, [url, offset, size] as they are.
func rowOf(v json.RawMessage) (Row, error) {
	var str string
	if json.Unmarshal(v, &str) == nil {
		if b64, ok := strings.CutPrefix(str, "base64:"); ok {
			b, err := base64.StdEncoding.DecodeString(b64)
			if err != nil {
				return Row{}, err
			}
			return Row{Raw: nonNil(b)}, nil
		}
		return Row{Raw: nonNil([]byte(str))}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(v, &list); err != nil || (len(list) != 1 && len(list) != 3) {
		return Row{}, fmt.Errorf("not a reference: %s", v)
	}
	var u string
	if err := json.Unmarshal(list[0], &u); err != nil {
		return Row{}, err
	}
	row := Row{Path: &u}
	if len(list) == 3 {
		var off, size float64
		if json.Unmarshal(list[1], &off) != nil || json.Unmarshal(list[2], &size) != nil || off > math.MaxInt64 {
			return Row{}, fmt.Errorf("bad range in %s", v)
		}
		row.Offset, row.Size = int64(off), int64(size)
	}
	return row, nil
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}
