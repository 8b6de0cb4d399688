// Package nd holds the N-dimensional box arithmetic that the codecs and
// the engine share: walking a box of indices in C order (an odometer),
// copying and filling boxes between C-order arrays of elements, the
// bounding box of linear ranges, and products checked for overflow.
//
// An array here is a C-order (row-major) byte slice of elements of one
// size; a box is a start and a shape (size) in elements, per dimension.
package nd

import (
	"bytes"
	"math/bits"
)

// Int is the integer type of indices and shapes: int in the codecs,
// int64 in the engine.
type Int interface{ ~int | ~int64 }

// Next advances idx through the box [lo, hi] (inclusive) in C order and
// reports whether there was a next position; after the last it leaves idx
// at lo.
func Next[T Int](idx, lo, hi []T) bool {
	for d := len(idx) - 1; d >= 0; d-- {
		if idx[d] < hi[d] {
			idx[d]++
			return true
		}
		idx[d] = lo[d]
	}
	return false
}

// Odometer advances idx through [0, size) in C order and reports whether
// there was a next position.
func Odometer[T Int](idx, size []T) bool {
	for d := len(idx) - 1; d >= 0; d-- {
		idx[d]++
		if idx[d] < size[d] {
			return true
		}
		idx[d] = 0
	}
	return false
}

// Strides returns the strides of a C-order array of shape whose elements
// are item units long (item 1: strides in elements).
func Strides[T Int](shape []T, item T) []T {
	strides := make([]T, len(shape))
	s := item
	for d := len(shape) - 1; d >= 0; d-- {
		strides[d] = s
		s *= shape[d]
	}
	return strides
}

// Product returns the product of shape (1 for rank 0); the caller knows it
// does not overflow (see Mul for the checked form).
func Product[T Int](shape []T) T {
	n := T(1)
	for _, d := range shape {
		n *= d
	}
	return n
}

// Mul returns a*b for non-negative a and b, and false when either is
// negative or the product overflows T.
func Mul[T Int](a, b T) (T, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	p := T(lo)
	if hi != 0 || p < 0 || uint64(p) != lo {
		return 0, false
	}
	return p, true
}

// Runs describes the contiguous runs of a box of size inside two C-order
// arrays: the number of leading dimensions to iterate (outer) and the
// length in elements of one run. Trailing dimensions that the box covers
// entirely in both arrays merge into the run.
func Runs[T Int](dstShape, srcShape, size []T) (outer int, run T) {
	outer, run = len(size), 1
	for outer > 0 {
		d := outer - 1
		run *= size[d]
		outer--
		if size[d] != dstShape[d] || (srcShape != nil && size[d] != srcShape[d]) {
			break
		}
	}
	return outer, run
}

// Copy copies the box of the given size at srcStart in src (a C-order
// array of srcShape) to dstStart in dst (of dstShape); elements are item
// bytes long. A box of rank 0 is one element; an empty box copies nothing.
func Copy[T Int](dst []byte, dstShape, dstStart []T, src []byte, srcShape, srcStart, size []T, item T) {
	outer, run := Runs(dstShape, srcShape, size)
	runBytes := run * item
	if runBytes == 0 || Product(size) == 0 {
		return
	}
	dstStrides, srcStrides := Strides(dstShape, item), Strides(srcShape, item)
	idx := make([]T, outer)
	for {
		var di, si T
		for d := range len(size) {
			var at T
			if d < outer {
				at = idx[d]
			}
			di += (dstStart[d] + at) * dstStrides[d]
			si += (srcStart[d] + at) * srcStrides[d]
		}
		copy(dst[di:di+runBytes], src[si:si+runBytes])
		if !Odometer(idx, size[:outer]) {
			return
		}
	}
}

// Fill writes fill (one element) into every element of the box of the
// given size at dstStart in dst (a C-order array of dstShape). With fresh
// (dst is all zero) a fill of zero bytes writes nothing.
func Fill[T Int](dst []byte, dstShape, dstStart, size []T, fill []byte, fresh bool) {
	item := T(len(fill))
	outer, run := Runs(dstShape, nil, size)
	if run == 0 || item == 0 || Product(size) == 0 {
		return
	}
	if fresh && AllZero(fill) {
		return
	}
	pattern := bytes.Repeat(fill, int(run))
	strides := Strides(dstShape, item)
	idx := make([]T, outer)
	for {
		var di T
		for d := range len(size) {
			var at T
			if d < outer {
				at = idx[d]
			}
			di += (dstStart[d] + at) * strides[d]
		}
		copy(dst[di:di+T(len(pattern))], pattern)
		if !Odometer(idx, size[:outer]) {
			return
		}
	}
}

// AllZero reports whether b holds only zero bytes.
func AllZero(b []byte) bool {
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}

// Each calls f with the element index in dst (a C-order array of
// dstShape) and in src (of srcShape; 0 when srcShape is nil) of every
// element of the box of size at dstStart and srcStart, in C order.
func Each[T Int](dstShape, dstStart, srcShape, srcStart, size []T, f func(di, si T)) {
	n := Product(size)
	idx := make([]T, len(size))
	for k := T(0); k < n; k++ {
		var di, si T
		for d := range size {
			di = di*dstShape[d] + dstStart[d] + idx[d]
			if srcShape != nil {
				si = si*srcShape[d] + srcStart[d] + idx[d]
			}
		}
		f(di, si)
		Odometer(idx, size)
	}
}

// Box is a box of a C-order array: its start and shape, per dimension.
type Box[T Int] struct {
	Start, Shape []T
}

// Bound returns the smallest box of a C-order array of shape that holds
// every element of the linear ranges [offs[i], offs[i]+lens[i]) (element
// positions in C order; each at least one element long), such that each
// range is also one contiguous run of the box's own C-order elements:
// a range that wraps from one row of dimension j to the next takes in the
// whole extent of the dimensions after j.
func Bound[T Int](shape, offs, lens []T) Box[T] {
	r := len(shape)
	lo, hi := make([]T, r), make([]T, r)
	for i := range r {
		lo[i], hi[i] = shape[i], -1
	}
	first, last := make([]T, r), make([]T, r)
	for k, off := range offs {
		s, e := off, off+lens[k]-1
		for i := r - 1; i >= 0; i-- {
			first[i], last[i] = s%shape[i], e%shape[i]
			s /= shape[i]
			e /= shape[i]
		}
		wrapped := false
		for i := range r {
			if wrapped {
				lo[i], hi[i] = 0, shape[i]-1
				continue
			}
			lo[i] = min(lo[i], first[i], last[i])
			hi[i] = max(hi[i], first[i], last[i])
			wrapped = first[i] != last[i]
		}
	}
	b := Box[T]{Start: lo, Shape: make([]T, r)}
	for i := range r {
		b.Shape[i] = hi[i] - lo[i] + 1
	}
	return b
}

// Offset returns the position among b's C-order elements of the element
// at position off of the C-order array of shape that b lies in; the
// element must lie inside b.
func (b Box[T]) Offset(shape []T, off T) T {
	var pos T
	stride := T(1)
	for i := len(shape) - 1; i >= 0; i-- {
		pos += (off%shape[i] - b.Start[i]) * stride
		stride *= b.Shape[i]
		off /= shape[i]
	}
	return pos
}
