package zarr

import (
	"context"
	"errors"
	"io"
)

// maxSlices bounds the slices ReadSlices returns: runs beyond are copied.
const maxSlices = 64

// collector gathers the slices of a read, for ReadSlices.
type collector struct {
	vec  [][]byte
	held []*chunkValue
}

// hold appends src, a slice of the decoded chunk v, and keeps a reference
// to v (released by release); it reports false, doing nothing, when the
// read has slices enough (the caller copies the run instead).
func (c *collector) hold(src []byte, v *chunkValue) bool {
	if len(c.vec) >= maxSlices-1 || len(src) == 0 {
		return false
	}
	v.acquire()
	c.held = append(c.held, v)
	c.vec = append(c.vec, src)
	return true
}

// add appends out, a part of the caller's buffer holding the next run,
// to the last slice when it continues it.
func (c *collector) add(out []byte) {
	if len(out) == 0 {
		return
	}
	if k := len(c.vec) - 1; k >= 0 {
		last := c.vec[k]
		if cap(last) > len(last) && &last[:len(last)+1][len(last)] == &out[0] {
			c.vec[k] = last[:len(last)+len(out)]
			return
		}
	}
	c.vec = append(c.vec, out)
}

// release lets go of the chunks the slices lie in.
func (c *collector) release() {
	for _, v := range c.held {
		v.release()
	}
	c.held = nil
}

// ReadSlices reads, like ReadAt, len(p) bytes of the logical content from
// off, but returns them as slices: of the decoded chunks it reads them
// from, cached or just loaded (without copying them into p), and of p for
// the rest (fill values, runs past maxSlices, reads straight from the
// store, reads that cut elements), which it reads into p; n is their total
// length. The slices may be read only until release is called, which must
// be called once (it lets the chunks' memory be reused).
func (a *Array) ReadSlices(ctx context.Context, p []byte, off int64) (vec [][]byte, n int, release func(), err error) {
	col := &collector{}
	n, err = a.readAt(ctx, p, off, col)
	if err != nil && !errors.Is(err, io.EOF) {
		col.release()
		return nil, 0, func() {}, err
	}
	if len(col.vec) == 0 && n > 0 {
		// Read into p (straight from the store, or cutting elements).
		col.vec = [][]byte{p[:n]}
	}
	return col.vec, n, col.release, err
}
