// Package n5 shows an N5 container as a Zarr v3 hierarchy, as the
// zarr-extensions registry recommends for reading N5 (codecs/n5_default,
// "Compatibility notes"): an "N5 Default Store", whose zarr.json at a
// prefix is the conversion of the N5 attributes.json there, wrapped in an
// "Implicit Group Store", whose zarr.json at a directory without
// attributes.json is a group's. Every other key is the container's own.
//
// An N5 dataset (attributes.json with "dimensions", "blockSize",
// "dataType" and "compression", or the old "compressionType") becomes an
// array of the same shape and chunk shape, in N5's axis order (the
// fastest first, as the registry keeps it), fill value 0, "/"-separated
// v2 chunk keys (N5's block paths), and the codec n5_default over a full
// transpose, big-endian bytes and the block compressor: raw, gzip (zlib
// with "useZlib"), bzip2, xz, blosc or zstd. An N5 compressor without a
// Zarr equivalent (N5's lz4 framing, jpeg) is named "n5.TYPE", a codec no
// reader has, so the array shows its metadata and its data is
// unsupported. The other members of attributes.json are the node's
// attributes (the root's "n5" version left out).
package n5

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/zarrfs/zarrfs/store"
)

// The documents: N5's and the one this package makes of it.
const (
	attributesDoc = "attributes.json"
	zarrDoc       = "zarr.json"
)

// Open returns st shown as a Zarr v3 hierarchy when its root is an N5
// container (an attributes.json naming an "n5" version) without a
// zarr.json; ok is false otherwise, and st is returned as it is.
func Open(ctx context.Context, st store.Store) (store.Store, bool, error) {
	b, err := st.Get(ctx, attributesDoc)
	if errors.Is(err, store.ErrNotExist) {
		return st, false, nil
	} else if err != nil {
		return st, false, err
	}
	var root map[string]json.RawMessage
	if json.Unmarshal(b, &root) != nil || root["n5"] == nil {
		return st, false, nil
	}
	// A container that is also Zarr ("an N5-style attributes.json and
	// Zarr-style zarr.json under the same directory") is read as Zarr.
	if _, err := st.GetRange(ctx, zarrDoc, store.Range(0, 1)); err == nil {
		return st, false, nil
	} else if !errors.Is(err, store.ErrNotExist) {
		return st, false, err
	}
	n := &n5Store{under: st}
	if l, ok := st.(store.Lister); ok {
		return &listing{n5Store: n, l: l}, true, nil
	}
	return n, true, nil
}

// n5Store is the N5 Default Store over under, for stores that cannot
// list (HTTP): a directory without attributes.json is not found.
type n5Store struct {
	under store.Store
}

// listing is n5Store over a store that can list: a directory without
// attributes.json, with something below it, is an implicit group.
type listing struct {
	*n5Store
	l store.Lister
}

// Get implements store.Store: zarr.json is converted from attributes.json.
func (s *n5Store) Get(ctx context.Context, key string) ([]byte, error) {
	if dir, ok := docDir(key); ok {
		return s.zarrJSON(ctx, dir, nil)
	}
	return s.under.Get(ctx, key)
}

// Get implements store.Store, with implicit groups.
func (s *listing) Get(ctx context.Context, key string) ([]byte, error) {
	if dir, ok := docDir(key); ok {
		return s.zarrJSON(ctx, dir, s.l)
	}
	return s.under.Get(ctx, key)
}

// GetRange implements store.Store.
func (s *n5Store) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if _, ok := docDir(key); ok {
		return getRange(ctx, s, key, r)
	}
	return s.under.GetRange(ctx, key, r)
}

// GetRange implements store.Store, with implicit groups.
func (s *listing) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	if _, ok := docDir(key); ok {
		return getRange(ctx, s, key, r)
	}
	return s.under.GetRange(ctx, key, r)
}

// getRange cuts the range r out of the whole document key of st.
func getRange(ctx context.Context, st store.Store, key string, r store.ByteRange) ([]byte, error) {
	b, err := st.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	start, end, err := r.Resolve(int64(len(b)))
	if err != nil {
		return nil, err
	}
	return b[start:end], nil
}

// String implements store.Store.
func (s *n5Store) String() string { return "N5 " + s.under.String() }

// Close closes the wrapped store.
func (s *n5Store) Close() error {
	if c, ok := s.under.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// ListDir implements store.Lister: attributes.json is listed as zarr.json.
func (s *listing) ListDir(ctx context.Context, dir string) (keys, prefixes []string, err error) {
	keys, prefixes, err = s.l.ListDir(ctx, dir)
	for i, k := range keys {
		if k == attributesDoc {
			keys[i] = zarrDoc
		}
	}
	slices.Sort(keys) // still sorted, as Lister promises
	return keys, prefixes, err
}

// ListPrefix implements store.Lister: attributes.json keys are listed as
// zarr.json.
func (s *listing) ListPrefix(ctx context.Context, prefix string) ([]string, error) {
	keys, err := s.l.ListPrefix(ctx, prefix)
	for i, k := range keys {
		if k == attributesDoc || strings.HasSuffix(k, "/"+attributesDoc) {
			keys[i] = k[:len(k)-len(attributesDoc)] + zarrDoc
		}
	}
	slices.Sort(keys)
	return keys, err
}

// docDir returns the directory of a zarr.json key ("" for the root).
func docDir(key string) (string, bool) {
	if key == zarrDoc {
		return "", true
	}
	dir, ok := strings.CutSuffix(key, "/"+zarrDoc)
	return dir, ok
}

// zarrJSON returns the v3 document of the node at dir: attributes.json
// converted, or (l not nil) an implicit group's document for a directory
// with something below it.
func (s *n5Store) zarrJSON(ctx context.Context, dir string, l store.Lister) ([]byte, error) {
	b, err := s.under.Get(ctx, store.Join(dir, attributesDoc))
	if errors.Is(err, store.ErrNotExist) && l != nil && dir != "" {
		keys, prefixes, lerr := l.ListDir(ctx, dir)
		if lerr != nil {
			return nil, lerr
		}
		if len(keys)+len(prefixes) > 0 {
			return []byte(`{"zarr_format": 3, "node_type": "group", "attributes": {}}`), nil
		}
	}
	if err != nil {
		return nil, err
	}
	doc, err := Convert(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", s, store.Join(dir, attributesDoc), err)
	}
	return doc, nil
}
