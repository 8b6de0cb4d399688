package zstd

import (
	"math/bits"
	"sync"
)

// FSE tables (RFC 8878 §4.1): reading a normalized distribution, building
// the decoding table, and the predefined tables of the sequence codes.

// fseEntry is one state of an FSE decoding table.
type fseEntry struct {
	newState uint16
	symbol   uint8
	nbBits   uint8
}

// fseTable is a decoding table of up to 2^9 states.
type fseTable struct {
	log   uint8
	ok    bool
	state [1 << 9]fseEntry
}

// seqTable sets up the decoding table of one sequence symbol type (kind 0:
// literal lengths, 1: offsets, 2: match lengths) for mode and returns the
// bytes of b it read.
func (s *zstdState) seqTable(t *fseTable, mode uint8, kind int, b []byte) (int, error) {
	maxLog, maxSym := []int{9, 8, 9}[kind], []int{35, 31, 52}[kind]
	switch mode {
	case 0:
		*t = *predefined[kind]()
		return 0, nil
	case 1:
		if len(b) < 1 || int(b[0]) > maxSym {
			return 0, errZstdFallback
		}
		t.log, t.ok = 0, true
		t.state[0] = fseEntry{symbol: b[0]}
		return 1, nil
	case 2:
		return s.readFSE(t, b, maxLog, maxSym)
	default:
		if !t.ok {
			return 0, errZstdFallback
		}
		return 0, nil
	}
}

// readFSE reads an FSE table description from b into t and returns its
// length.
func (s *zstdState) readFSE(t *fseTable, b []byte, maxLog, maxSym int) (int, error) {
	norm := s.norm[:]
	pos := 0 // in bits
	get := func(n int) int {
		// n ≤ 10 bits from pos; bits past the end read as zeros (the
		// caller checks the end).
		v := 0
		for k := range 3 {
			if i := pos>>3 + k; i < len(b) {
				v |= int(b[i]) << (8 * k)
			}
		}
		return v >> (pos & 7) & (1<<n - 1)
	}
	log := get(4) + 5
	pos += 4
	if log > maxLog {
		return 0, errZstdFallback
	}
	remaining := 1<<log + 1
	threshold := 1 << log
	nbBits := log + 1
	sym := 0
	prev0 := false
	for remaining > 1 && sym <= maxSym {
		if prev0 {
			// Runs of symbols with a count of zero, in 2-bit repeats.
			for {
				r := get(2)
				pos += 2
				for range r {
					if sym > maxSym {
						return 0, errZstdFallback
					}
					norm[sym] = 0
					sym++
				}
				if r != 3 {
					break
				}
				if pos > 8*len(b) {
					return 0, errZstdFallback
				}
			}
		}
		max := 2*threshold - 1 - remaining
		var count int
		if v := get(nbBits - 1); v < max {
			count = v
			pos += nbBits - 1
		} else {
			count = get(nbBits)
			if count >= threshold {
				count -= max
			}
			pos += nbBits
		}
		count--
		if count < 0 {
			remaining--
		} else {
			remaining -= count
		}
		if sym > maxSym || pos > 8*len(b) || remaining < 1 {
			return 0, errZstdFallback
		}
		norm[sym] = int16(count)
		sym++
		prev0 = count == 0
		for remaining < threshold && threshold > 1 {
			nbBits--
			threshold >>= 1
		}
	}
	if remaining != 1 || pos > 8*len(b) {
		return 0, errZstdFallback
	}
	if !buildFSE(t, norm[:sym], log) {
		return 0, errZstdFallback
	}
	return (pos + 7) / 8, nil
}

// buildFSE builds the decoding table of the normalized counts norm (-1:
// less than one) with accuracy log.
func buildFSE(t *fseTable, norm []int16, log int) bool {
	size := 1 << log
	high := size - 1
	var next [256]uint16
	for s, c := range norm {
		if c == -1 {
			if high < 0 {
				return false
			}
			t.state[high].symbol = uint8(s)
			high--
			next[s] = 1
		} else {
			next[s] = uint16(max(c, 0))
		}
	}
	mask, step, pos := size-1, size>>1+size>>3+3, 0
	for s, c := range norm {
		for range max(c, 0) {
			if pos > high {
				return false
			}
			t.state[pos].symbol = uint8(s)
			pos = (pos + step) & mask
			for pos > high {
				pos = (pos + step) & mask
			}
		}
	}
	if pos != 0 {
		return false
	}
	for u := range size {
		e := &t.state[u]
		ns := next[e.symbol]
		next[e.symbol]++
		nb := log - (bits.Len16(ns) - 1)
		e.nbBits = uint8(nb)
		e.newState = uint16(int(ns)<<nb - size)
	}
	t.log, t.ok = uint8(log), true
	return true
}

// Literal and match length codes: baseline and extra bits.
var (
	llBase = [36]uint32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15,
		16, 18, 20, 22, 24, 28, 32, 40, 48, 64, 128, 256, 512, 1024, 2048, 4096,
		8192, 16384, 32768, 65536}
	llBits = [36]uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		1, 1, 1, 1, 2, 2, 3, 3, 4, 6, 7, 8, 9, 10, 11, 12,
		13, 14, 15, 16}
	mlBase = [53]uint32{3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18,
		19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34,
		35, 37, 39, 41, 43, 47, 51, 59, 67, 83, 99, 131, 259, 515, 1027, 2051,
		4099, 8195, 16387, 32771, 65539}
	mlBits = [53]uint8{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
		1, 1, 1, 1, 2, 2, 3, 3, 4, 4, 5, 7, 8, 9, 10, 11,
		12, 13, 14, 15, 16}
)

// The predefined distributions' tables, built once.
var predefined = [3]func() *fseTable{
	sync.OnceValue(func() *fseTable {
		return mustBuild([]int16{4, 3, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 1, 1, 1,
			2, 2, 2, 2, 2, 2, 2, 2, 2, 3, 2, 1, 1, 1, 1, 1,
			-1, -1, -1, -1}, 6)
	}),
	sync.OnceValue(func() *fseTable {
		return mustBuild([]int16{1, 1, 1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
			1, 1, 1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1}, 5)
	}),
	sync.OnceValue(func() *fseTable {
		return mustBuild([]int16{1, 4, 3, 2, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1,
			1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
			1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, -1, -1,
			-1, -1, -1, -1, -1}, 6)
	}),
}

func mustBuild(norm []int16, log int) *fseTable {
	t := new(fseTable)
	if !buildFSE(t, norm, log) {
		panic("blosc: zstd predefined table")
	}
	return t
}
