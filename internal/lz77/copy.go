// Package lz77 holds what the LZ77-family decoders (BloscLZ, zstd, DEFLATE)
// share: the copy of a match from the bytes already decoded.
package lz77

// Copy copies the length bytes at dist before dst[op] to dst[op:],
// byte by byte as LZ77 defines it: a match longer than its distance
// repeats the bytes it copies. The caller checks 1 <= dist <= op and
// op+length <= len(dst). Short matches move 8 bytes at a time when dst has
// room past them (the bytes past the match are written again later);
// long overlapping ones double the copied run with memmove.
func Copy(dst []byte, op, dist, length int) {
	from := op - dist
	switch {
	case dist >= length:
		if length <= 16 && op+16 <= len(dst) && dist >= 16 {
			*(*[16]byte)(dst[op:]) = *(*[16]byte)(dst[from:])
			return
		}
		copy(dst[op:op+length], dst[from:from+length])
	case length > 64:
		m := dst[op : op+length]
		k := copy(m, dst[from:op])
		for k < length {
			k += copy(m[k:], m[:k])
		}
	case op+length+8 > len(dst):
		for k := range length {
			dst[op+k] = dst[from+k]
		}
	case dist >= 8:
		// Each 8 bytes read were written at least 8 bytes earlier.
		for k := 0; k < length; k += 8 {
			*(*[8]byte)(dst[op+k:]) = *(*[8]byte)(dst[from+k:])
		}
	default:
		// Byte by byte up to a multiple of the distance of at least 8,
		// then 8 bytes at a time from that far back.
		d := dist * ((8 + dist - 1) / dist)
		n := min(d, length)
		for k := range n {
			dst[op+k] = dst[from+k]
		}
		for k := n; k < length; k += 8 {
			*(*[8]byte)(dst[op+k:]) = *(*[8]byte)(dst[op+k-d:])
		}
	}
}
