package codec

import (
	"errors"
	"math"
	"testing"
)

// TestCheckElems: a known size is the only bound on n elements of a
// size (chunks may be up to zarr's 2 GiB), UnknownSizeCap the bound when
// the size is unknown, and no n makes n*size overflow.
func TestCheckElems(t *testing.T) {
	for _, c := range []struct {
		n, size, want int
		ok            bool
	}{
		{10, 4, 40, true},
		{10, 4, 41, false},
		{150 << 20, 8, 150 << 20 * 8, true}, // 1.2 GiB, known: fine
		{150 << 20, 8, -1, false},           // unknown: over the cap
		{UnknownSizeCap / 8, 8, -1, true},
		{UnknownSizeCap/8 + 1, 8, -1, false},
		{math.MaxInt / 2, 16, 64, false}, // n*size would overflow
		{math.MaxInt / 2, 16, -1, false},
		{0, 8, 0, true},
		{0, 8, -1, true},
	} {
		err := checkElems("t", c.n, c.size, c.want)
		if (err == nil) != c.ok || err != nil && !errors.Is(err, ErrCorrupt) {
			t.Errorf("checkElems(%d, %d, %d) = %v, want ok %v", c.n, c.size, c.want, err, c.ok)
		}
	}
}
