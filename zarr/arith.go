package zarr

import (
	"fmt"
	"math"
	"math/bits"
)

// Limits on what the engine accepts from metadata.
const (
	// MaxRank is the largest number of dimensions an array may have.
	MaxRank = 32
	// MaxChunkBytes bounds the decoded size of one chunk.
	MaxChunkBytes = 2 << 30
	// MaxDocumentSize bounds the size of a metadata document.
	MaxDocumentSize = 16 << 20
)

// mulInt64 returns a*b for non-negative a and b, or ok=false on overflow.
func mulInt64(a, b int64) (int64, bool) {
	if a < 0 || b < 0 {
		return 0, false
	}
	hi, lo := bits.Mul64(uint64(a), uint64(b))
	if hi != 0 || lo > math.MaxInt64 {
		return 0, false
	}
	return int64(lo), true
}

// product returns the product of dims (1 for none) times scale, or an error
// naming what on overflow.
func product(what string, dims []int64, scale int64) (int64, error) {
	n := scale
	for _, d := range dims {
		var ok bool
		if n, ok = mulInt64(n, d); !ok {
			return 0, fmt.Errorf("%w: %s %v × %d overflows int64", ErrInvalidMetadata, what, dims, scale)
		}
	}
	return n, nil
}

// ceilDiv returns ceil(a/b) for a ≥ 0, b > 0.
func ceilDiv(a, b int64) int64 {
	if a == 0 {
		return 0
	}
	return (a-1)/b + 1
}
