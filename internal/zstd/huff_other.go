//go:build !amd64 || purego

package zstd

// huff4Prefix decodes the first i symbols of each of the four Huffman
// streams br (fresh from init) into out, q bytes apart, and returns i, at
// most len(out)-3q; br is left where each stream stands.
func huff4Prefix(t *[1 << huffTableLog]huffEntry, out []byte, q int, br *[4]bitReader) int {
	return huff4Go(t, out, q, br)
}
