package meta

import (
	"fmt"

	"github.com/zarrfs/zarrfs/internal/nd"
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

// Product returns the product of dims (1 for none) times scale, or an error
// naming what on overflow.
func Product(what string, dims []int64, scale int64) (int64, error) {
	n := scale
	for _, d := range dims {
		var ok bool
		if n, ok = nd.Mul(n, d); !ok {
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
