package nd

import (
	"bytes"
	"math"
	"slices"
	"testing"
)

func TestNext(t *testing.T) {
	idx := []int{1, 2}
	var got [][]int
	for {
		got = append(got, slices.Clone(idx))
		if !Next(idx, []int{1, 2}, []int{2, 3}) {
			break
		}
	}
	want := [][]int{{1, 2}, {1, 3}, {2, 2}, {2, 3}}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("Next visits %v, want %v", got, want)
	}
	if !slices.Equal(idx, []int{1, 2}) {
		t.Errorf("after the last position idx = %v, want lo", idx)
	}
}

func TestMul(t *testing.T) {
	for _, c := range []struct {
		a, b, want int64
		ok         bool
	}{
		{3, 4, 12, true},
		{0, math.MaxInt64, 0, true},
		{math.MaxInt64, 1, math.MaxInt64, true},
		{math.MaxInt64, 2, 0, false},
		{1 << 32, 1 << 31, 0, false},
		{-1, 2, 0, false},
	} {
		if got, ok := Mul(c.a, c.b); got != c.want || ok != c.ok {
			t.Errorf("Mul(%d, %d) = %d, %v; want %d, %v", c.a, c.b, got, ok, c.want, c.ok)
		}
	}
}

// elements returns a C-order array of n one-byte elements 0, 1, 2 ….
func elements(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i)
	}
	return b
}

func TestCopyAndFill(t *testing.T) {
	// A 4×5 source; copy its box at (1, 2) of size 2×3 to (0, 1) of a 3×4
	// destination.
	src := elements(20)
	dst := make([]byte, 12)
	Copy(dst, []int{3, 4}, []int{0, 1}, src, []int{4, 5}, []int{1, 2}, []int{2, 3}, 1)
	want := []byte{0, 7, 8, 9, 0, 12, 13, 14, 0, 0, 0, 0}
	if !bytes.Equal(dst, want) {
		t.Errorf("Copy = %v, want %v", dst, want)
	}
	// Whole rows merge into one run; an empty box copies nothing.
	dst = make([]byte, 20)
	Copy(dst, []int64{4, 5}, []int64{1, 0}, src, []int64{4, 5}, []int64{2, 0}, []int64{2, 5}, 1)
	if !bytes.Equal(dst[5:15], src[10:20]) || !AllZero(dst[:5]) || !AllZero(dst[15:]) {
		t.Errorf("Copy of whole rows = %v", dst)
	}
	Copy(dst, []int{4, 5}, []int{0, 0}, src, []int{4, 5}, []int{0, 0}, []int{0, 5}, 1)
	// Elements of two bytes; fill a 2×2 box.
	dst = make([]byte, 2*3*3)
	Fill(dst, []int{3, 3}, []int{1, 1}, []int{2, 2}, []byte{1, 2}, true)
	want = []byte{0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 1, 2, 0, 0, 1, 2, 1, 2}
	if !bytes.Equal(dst, want) {
		t.Errorf("Fill = %v, want %v", dst, want)
	}
	Fill(dst, []int{3, 3}, []int{0, 0}, []int{3, 3}, []byte{0, 0}, true) // fresh: nothing written
	if !bytes.Equal(dst, want) {
		t.Errorf("Fill of zero into a fresh array wrote %v", dst)
	}
	Fill(dst, []int{3, 3}, []int{0, 0}, []int{3, 3}, []byte{0, 0}, false)
	if !AllZero(dst) {
		t.Errorf("Fill of zero = %v", dst)
	}
}

func TestEach(t *testing.T) {
	var got [][2]int
	Each([]int{3, 4}, []int{1, 1}, []int{2, 2}, []int{0, 0}, []int{2, 2}, func(di, si int) { got = append(got, [2]int{di, si}) })
	want := [][2]int{{5, 0}, {6, 1}, {9, 2}, {10, 3}}
	if !slices.Equal(got, want) {
		t.Errorf("Each = %v, want %v", got, want)
	}
}

// TestBound checks that every range lies in the bounding box as one run of
// its elements, at the position Offset says, and that the box is the
// smallest that does.
func TestBound(t *testing.T) {
	shape := []int64{4, 5, 6}
	src := elements(120)
	for _, c := range []struct {
		offs, lens []int64
		start      []int64
		size       []int64
	}{
		{[]int64{7}, []int64{3}, []int64{0, 1, 1}, []int64{1, 1, 3}},
		{[]int64{7, 40}, []int64{3, 2}, []int64{0, 1, 1}, []int64{2, 1, 5}},
		{[]int64{10}, []int64{5}, []int64{0, 1, 0}, []int64{1, 2, 6}}, // wraps a row of the last dimension
		{[]int64{28}, []int64{4}, []int64{0, 0, 0}, []int64{2, 5, 6}}, // wraps into the next plane
	} {
		b := Bound(shape, c.offs, c.lens)
		if !slices.Equal(b.Start, c.start) || !slices.Equal(b.Shape, c.size) {
			t.Errorf("Bound(%v, %v) = %v %v, want %v %v", c.offs, c.lens, b.Start, b.Shape, c.start, c.size)
			continue
		}
		box := make([]byte, Product(b.Shape))
		Copy(box, b.Shape, make([]int64, 3), src, shape, b.Start, b.Shape, 1)
		for k, off := range c.offs {
			at := b.Offset(shape, off)
			if !bytes.Equal(box[at:at+c.lens[k]], src[off:off+c.lens[k]]) {
				t.Errorf("range %d+%d at %d of the box %v reads %v", off, c.lens[k], at, b, box[at:at+c.lens[k]])
			}
		}
	}
}
