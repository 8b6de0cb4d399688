//go:build amd64 && !purego

package blosc

// haveSIMD reports whether the vector kernels below exist.
const haveSIMD = true

// The SSE2 kernels (SSE2 is part of every amd64 processor) interleave 16
// elements per iteration. Each takes ts streams of at least n bytes and a
// dst of at least ts*n bytes, and does the first n&^15 elements.
//
//go:noescape
func unshuffle2SSE2(dst *byte, streams *[2]*byte, n int)

//go:noescape
func unshuffle4SSE2(dst *byte, streams *[4]*byte, n int)

//go:noescape
func unshuffle8SSE2(dst *byte, streams *[8]*byte, n int)

// unshuffleSIMD unshuffles a prefix of src into dst as unshuffle does and
// returns the number of elements it did (a multiple of 8), which is zero
// for typesizes it has no kernel for.
func unshuffleSIMD(dst, src []byte, ts int) int {
	n := len(src) / ts
	if n < 16 || len(dst) < len(src) || (ts != 2 && ts != 4 && ts != 8) {
		return 0
	}
	var streams [8][]byte
	for j := range ts {
		streams[j] = src[j*n : (j+1)*n]
	}
	return unshuffleStreamsSIMD(dst, streams[:ts], n)
}

// unshuffleStreamsSIMD interleaves a prefix of the streams (ts of them, n
// bytes each) into dst, element i's byte j from streams[j][i], and returns
// the number of elements it did (a multiple of 8): zero for typesizes it
// has no kernel for.
func unshuffleStreamsSIMD(dst []byte, streams [][]byte, n int) int {
	ts := len(streams)
	if n < 16 || len(dst) < ts*n {
		return 0
	}
	var p [8]*byte
	for j, s := range streams {
		if j >= len(p) || len(s) < n {
			return 0
		}
		p[j] = &s[0]
	}
	switch ts {
	case 2:
		unshuffle2SSE2(&dst[0], (*[2]*byte)(p[:2]), n)
	case 4:
		unshuffle4SSE2(&dst[0], (*[4]*byte)(p[:4]), n)
	case 8:
		unshuffle8SSE2(&dst[0], &p, n)
	default:
		return 0
	}
	return n &^ 15
}

// bitunshuffle1SSE2 undoes the bit shuffle of one byte plane: src holds 8
// rows of rowLen bytes; it writes the first 8*(rowLen&^15) bytes of dst.
//
//go:noescape
func bitunshuffle1SSE2(dst, src []byte, rowLen int)

// bitunshufflePlaneSIMD undoes the bit shuffle of a prefix of the byte plane
// src (8 rows of rowLen bytes) into dst and returns the number of row bytes
// k it did: dst[:8*k] is done.
func bitunshufflePlaneSIMD(dst, src []byte, rowLen int) int {
	if rowLen < 16 || len(src) < 8*rowLen || len(dst) < 8*rowLen {
		return 0
	}
	bitunshuffle1SSE2(dst, src, rowLen)
	return rowLen &^ 15
}
