package lz77

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestCopy compares Copy with the byte-by-byte definition for
// every distance and length up to 80 and some long ones, near the end of
// the buffer too.
func TestCopy(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	lengths := []int{100, 255, 1000, 4097}
	for n := range 81 {
		lengths = append(lengths, n)
	}
	for _, length := range lengths {
		for dist := 1; dist <= 90; dist++ {
			for _, slack := range []int{0, 3, 8, 20} {
				op := 100
				buf := make([]byte, op+length+slack)
				for i := range op {
					buf[i] = byte(r.Uint32())
				}
				want := bytes.Clone(buf)
				for k := range length {
					want[op+k] = want[op-dist+k]
				}
				Copy(buf, op, dist, length)
				if !bytes.Equal(buf[:op+length], want[:op+length]) {
					t.Fatalf("dist %d length %d slack %d: differs from the definition", dist, length, slack)
				}
			}
		}
	}
}
