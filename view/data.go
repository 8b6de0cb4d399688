package view

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/zarrfs/zarrfs/zarr"
)

// dataFile is an array's `data` (the decoded contents, C order,
// little-endian) or `data.npy` (the same behind a NumPy header).
type dataFile struct {
	name   string
	node   *zarr.Node
	header []byte // the .npy header; nil for data
}

func (f *dataFile) Name() string { return f.name }

// Size is the header's length and the array's contents': known from
// metadata, nothing decoded.
func (f *dataFile) Size(context.Context) (int64, error) {
	if f.node.Array == nil {
		return 0, nil
	}
	return int64(len(f.header)) + f.node.Array.Size(), nil
}

// Check returns why the contents cannot be decoded: the node's metadata
// is broken, or names something unsupported.
func (f *dataFile) Check(context.Context) error {
	switch {
	case f.node.Err != nil:
		return f.node.Err
	case f.node.Array == nil:
		return fmt.Errorf("array %q: %w", f.node.Path, zarr.ErrUnsupported)
	default:
		return f.node.Array.Err
	}
}

// Xattrs are the array's.
func (f *dataFile) Xattrs() []Xattr {
	if f.node.Array == nil {
		return nil
	}
	return ArrayXattrs(f.node.Array.Meta())
}

// ReadAt copies the header's bytes, then the array's contents.
func (f *dataFile) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	if err := f.Check(ctx); err != nil {
		return 0, err
	}
	n, err := readBytes(f.header, p, off)
	if n == len(p) && err == nil {
		return n, nil
	}
	m, err := f.node.Array.ReadAt(ctx, p[n:], off+int64(n)-int64(len(f.header)))
	return n + m, err
}

// ReadSlices answers a read with the header's bytes (copied into p) and
// slices of the decoded chunks under the rest, not copied (see
// zarr.Array.ReadSlices); the end of the file is not an error.
func (f *dataFile) ReadSlices(ctx context.Context, p []byte, off int64) (vec [][]byte, n int, release func(), err error) {
	if err := f.Check(ctx); err != nil {
		return nil, 0, nil, err
	}
	if off < 0 {
		return nil, 0, nil, fmt.Errorf("read at %d: negative offset", off)
	}
	if off < int64(len(f.header)) {
		n = copy(p, f.header[off:])
	}
	if n == len(p) {
		return [][]byte{p[:n]}, n, func() {}, nil
	}
	dataOff := off + int64(n) - int64(len(f.header))
	vec, m, release, err := f.node.Array.ReadSlices(ctx, p[n:], dataOff)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, 0, nil, err
	}
	if n > 0 {
		vec = append([][]byte{p[:n]}, vec...)
	}
	return vec, n + m, release, nil
}
