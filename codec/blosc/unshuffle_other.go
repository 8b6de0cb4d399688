//go:build !amd64 || purego

package blosc

// unshuffleSIMD has no vector kernels on this architecture: unshuffle's
// portable code does all the work.
func unshuffleSIMD(dst, src []byte, ts int) int { return 0 }
