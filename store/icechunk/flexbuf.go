package icechunk

import (
	"encoding/binary"
	"math"
)

// FlexBuffers (flatbuffers.dev/flexbuffers), the schemaless format of the
// spec 2 repo info's config field, read as far as Icechunk's
// configuration needs: maps, vectors, strings, keys, booleans, integers
// and nulls. Every read is bounds-checked by Go's slices; callers run
// inside parse, which turns a panic into ErrCorrupt. Nothing is
// allocated from a length the buffer claims before that length is
// checked against the buffer.

// FlexBuffers types (flexbuffers.h, Type).
const (
	flexNull      = 0
	flexInt       = 1
	flexUint      = 2
	flexFloat     = 3
	flexKey       = 4
	flexString    = 5
	flexIndInt    = 6
	flexIndUint   = 7
	flexMap       = 9
	flexVector    = 10
	flexVectorKey = 14
	flexBool      = 26
)

// flexRef is a value: where it is stored (pos, in its parent's width)
// and its packed type.
type flexRef struct {
	buf         []byte
	pos         int
	parentWidth int
	width       int // 1 << (packed & 3): the width inside the value it points to
	typ         int
}

// flexRoot returns the root value of a FlexBuffer: its last byte is the
// root's width, the one before its packed type.
func flexRoot(buf []byte) flexRef {
	n := len(buf)
	w := int(buf[n-1])
	if w != 1 && w != 2 && w != 4 && w != 8 {
		panic("root width not 1, 2, 4 or 8")
	}
	return flexRef{buf: buf, pos: n - 2 - w, parentWidth: w, width: 1 << (buf[n-2] & 3), typ: int(buf[n-2] >> 2)}
}

// flexUintAt reads an unsigned integer of width w at p.
func flexUintAt(buf []byte, p, w int) uint64 {
	b := buf[p : p+w]
	switch w {
	case 1:
		return uint64(b[0])
	case 2:
		return uint64(binary.LittleEndian.Uint16(b))
	case 4:
		return uint64(binary.LittleEndian.Uint32(b))
	case 8:
		return binary.LittleEndian.Uint64(b)
	}
	panic("width not 1, 2, 4 or 8")
}

// indirect is where an offset value at r.pos points.
func (r flexRef) indirect() int {
	off := flexUintAt(r.buf, r.pos, r.parentWidth)
	if off > uint64(r.pos) {
		panic("offset before the buffer")
	}
	return r.pos - int(off)
}

// vectorLen is the length stored before the vector (or string) at p,
// checked against what the buffer can hold.
func (r flexRef) vectorLen(p int) int {
	n := flexUintAt(r.buf, p-r.width, r.width)
	if n > uint64(len(r.buf)) {
		panic("length past the buffer")
	}
	return int(n)
}

// str returns a string or key value ("" and false for anything else).
func (r flexRef) str() (string, bool) {
	switch r.typ {
	case flexString:
		p := r.indirect()
		n := r.vectorLen(p)
		return string(r.buf[p : p+n]), true
	case flexKey:
		return flexKeyAt(r.buf, r.indirect()), true
	}
	return "", false
}

// maxFlexKey bounds a key's length (a field name, a container's name
// or URL prefix), so that many keys pointing at one long run of bytes
// cost little.
const maxFlexKey = 2048

// flexKeyAt is the NUL-terminated key at p.
func flexKeyAt(buf []byte, p int) string {
	for i := p; i <= p+maxFlexKey; i++ {
		if buf[i] == 0 {
			return string(buf[p:i])
		}
	}
	panic("key longer than 2048 bytes")
}

// boolean returns a bool value, or a non-zero integer's truth.
func (r flexRef) boolean() bool {
	switch r.typ {
	case flexBool, flexInt, flexUint:
		return flexUintAt(r.buf, r.pos, r.parentWidth) != 0
	case flexIndInt, flexIndUint:
		return flexUintAt(r.buf, r.indirect(), r.width) != 0
	}
	return false
}

// each calls f with every key and value of a map, in order; false: r is
// not a map.
func (r flexRef) each(f func(key string, v flexRef)) bool {
	if r.typ != flexMap {
		return false
	}
	p := r.indirect()
	n := r.vectorLen(p)
	if n > math.MaxInt32/8 || p+n*r.width+n > len(r.buf) {
		panic("map past the buffer")
	}
	// Before the length: the keys vector's offset and byte width.
	kr := flexRef{buf: r.buf, pos: p - 3*r.width, parentWidth: r.width}
	kp := kr.indirect()
	kw := int(flexUintAt(r.buf, p-2*r.width, r.width))
	if kw != 1 && kw != 2 && kw != 4 && kw != 8 {
		panic("keys width not 1, 2, 4 or 8")
	}
	if flexUintAt(r.buf, kp-kw, kw) != uint64(n) {
		panic("keys and values of different lengths")
	}
	types := p + n*r.width
	for i := range n {
		key := flexKeyAt(r.buf, flexRef{buf: r.buf, pos: kp + i*kw, parentWidth: kw}.indirect())
		t := r.buf[types+i]
		f(key, flexRef{buf: r.buf, pos: p + i*r.width, parentWidth: r.width, width: 1 << (t & 3), typ: int(t >> 2)})
	}
	return true
}

// get returns the value of key in map r.
func (r flexRef) get(key string) (flexRef, bool) {
	var out flexRef
	found := false
	r.each(func(k string, v flexRef) {
		if !found && k == key {
			out, found = v, true
		}
	})
	return out, found
}
