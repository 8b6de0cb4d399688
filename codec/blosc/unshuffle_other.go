//go:build !amd64 || purego

package blosc

// haveSIMD reports whether vector kernels exist.
const haveSIMD = false

// unshuffleSIMD has no vector kernels on this architecture: unshuffle's
// portable code does all the work.
func unshuffleSIMD(dst, src []byte, ts int) int { return 0 }

// bitunshufflePlaneSIMD has no vector kernel on this architecture.
func bitunshufflePlaneSIMD(dst, src []byte, rowLen int) int { return 0 }

// unshuffleStreamsSIMD has no vector kernels on this architecture.
func unshuffleStreamsSIMD(dst []byte, streams [][]byte, n int) int { return 0 }
