//go:build amd64 && !purego

package zstd

import "encoding/binary"

// huff4AMD64 is huff4Prefix's loop in assembly (huff_amd64.s): the Go
// compiler runs out of registers for four streams and spills them.
//
//go:noescape
func huff4AMD64(t *[1 << huffTableLog]huffEntry, out *byte, q, n int, br *[4]bitReader) int

// huff4Prefix decodes the first i symbols of each of the four Huffman
// streams br (fresh from init) into out, q bytes apart, and returns i, at
// most len(out)-3q; br is left where each stream stands.
func huff4Prefix(t *[1 << huffTableLog]huffEntry, out []byte, q int, br *[4]bitReader) int {
	n := (len(out) - 3*q) / 5 * 5
	if n <= 0 || q < n || len(out) < 3*q+n {
		return 0
	}
	for k := range br {
		if br[k].off < 8 || br[k].bitsRead > 8 {
			return 0
		}
	}
	i := huff4AMD64(t, &out[0], q, n, br)
	for k := range br {
		br[k].value = binary.LittleEndian.Uint64(br[k].in[br[k].off:])
	}
	return i
}
