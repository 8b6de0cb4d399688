// Package hugemem allocates large byte buffers backed ahead of their first
// write, by transparent huge pages where they fit.
//
// Fresh memory costs a page fault per 4 KiB page on its first write, and
// on virtual machines that fault can cost more than decoding the chunk
// written there. The whole 2 MiB-aligned huge pages within a buffer are
// advised MADV_HUGEPAGE, and take one fault each; the rest is populated
// with one MADV_POPULATE_WRITE call instead of a fault per page. Both are
// advice: a kernel without them leaves the buffer as make would. The
// buffer is allocated at its exact size, so the Go heap's accounting (and
// its soft memory limit) sees what it costs. BenchmarkAlloc compares it
// with make on memory just given back to the kernel (figures in BENCH.md).
package hugemem

// HugePage is the size of a transparent huge page on the platforms zarrfs
// runs on (x86-64 and arm64 with 4 KiB pages).
const HugePage = 2 << 20

// minPopulate is the smallest buffer Alloc prepares: below it the faults
// are few and the system calls would cost more than they save.
const minPopulate = 256 << 10

// Alloc returns a buffer of length n and capacity c (n ≤ c) whose contents
// are undefined (zero when fresh), its pages backed ahead of the first
// write when c is at least minPopulate.
func Alloc(n, c int) []byte {
	if n > c {
		panic("hugemem: length beyond capacity")
	}
	b := make([]byte, n, c)
	if c >= minPopulate {
		prepare(b[:c])
	}
	return b
}
