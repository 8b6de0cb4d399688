package zarr

import "context"

// Size returns the size of the array's logical content in bytes:
// prod(shape) × DataType.Size; 0 for variable-length types.
func (a *Array) Size() int64 { return 0 }

// Variable reports whether the array's elements are variable-length
// strings or byte strings (read them with Elements).
func (a *Array) Variable() bool { return a.DataType.Size == 0 }

// ReadAt reads len(p) bytes of the logical content from off, with
// io.ReaderAt semantics.
func (a *Array) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	return 0, errNotImplemented
}

// Elements calls fn with every element in C order (the bytes of a
// variable-length element, or the little-endian bytes of a fixed-size one).
// fn must not keep elem after it returns.
func (a *Array) Elements(ctx context.Context, fn func(elem []byte) error) error {
	return errNotImplemented
}

// WriteAt writes p into the logical content at off (read-modify-write of
// partially covered chunks).
func (a *Array) WriteAt(ctx context.Context, p []byte, off int64) (int, error) {
	return 0, errNotImplemented
}

// WriteRegion writes data (C order, little-endian) into the box of the
// given start and shape.
func (a *Array) WriteRegion(ctx context.Context, start, shape []int64, data []byte) error {
	return errNotImplemented
}
