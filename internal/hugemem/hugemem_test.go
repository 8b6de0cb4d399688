package hugemem

import (
	"fmt"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
)

func TestAlloc(t *testing.T) {
	for _, tc := range []struct{ n, c int }{
		{0, 0},
		{100, 4096},
		{minPopulate - 1, minPopulate - 1},
		{minPopulate, minPopulate},
		{1 << 20, 1 << 20},
		{2<<20 - 5, 2 << 20},
		{3 << 20, 3 << 20},
		{15 << 20, 15<<20 + 1<<19},
	} {
		b := Alloc(tc.n, tc.c)
		if len(b) != tc.n || cap(b) != tc.c {
			t.Errorf("Alloc(%d, %d): len %d cap %d", tc.n, tc.c, len(b), cap(b))
			continue
		}
		full := b[:tc.c]
		for i := range full {
			full[i] = byte(i)
		}
		for i := range full {
			if full[i] != byte(i) {
				t.Fatalf("Alloc(%d, %d): byte %d reads %d", tc.n, tc.c, i, full[i])
			}
		}
	}
}

func TestAllocLengthBeyondCapacity(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("Alloc(2, 1) did not panic")
		}
	}()
	Alloc(2, 1)
}

// TestAllocHugePages checks that a buffer holding whole huge pages gets
// them, where the kernel offers transparent huge pages on request: the
// process's AnonHugePages grows, unless the kernel reports that it could
// not find one (thp_fault_fallback).
func TestAllocHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || !strings.Contains(string(mode), "[madvise]") && !strings.Contains(string(mode), "[always]") {
		t.Skipf("transparent huge pages are not offered here (%q)", strings.TrimSpace(string(mode)))
	}
	before, fallbacks := meminfo(t, "/proc/self/smaps_rollup", "AnonHugePages:"), meminfo(t, "/proc/vmstat", "thp_fault_fallback")
	b := Alloc(16<<20, 16<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	after := meminfo(t, "/proc/self/smaps_rollup", "AnonHugePages:")
	if after-before < 2<<10 && meminfo(t, "/proc/vmstat", "thp_fault_fallback") == fallbacks {
		t.Errorf("a 16 MiB buffer added %d KiB of huge pages, want at least 2048", after-before)
	}
}

// meminfo returns the number after the line's key in the file.
func meminfo(t *testing.T, file, key string) int64 {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Skipf("%v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == key {
			n, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Skipf("%s has no %s", file, key)
	return 0
}

var sink []byte

// BenchmarkAlloc allocates a buffer from memory the Go runtime has just
// given back to the kernel (debug.FreeOSMemory, not timed) and writes all
// of it, as a chunk decoded into a new buffer is: with make, each page
// faults on its first write; with Alloc, huge pages and one
// MADV_POPULATE_WRITE back it first. This is the measurement that decides
// whether Alloc earns its place on a machine:
//
//	go test -run NONE -bench Alloc ./internal/hugemem/
func BenchmarkAlloc(b *testing.B) {
	for _, size := range []int{2 << 20, 16 << 20} {
		src := make([]byte, size)
		for i := range src {
			src[i] = byte(i)
		}
		for _, alloc := range []struct {
			name string
			fn   func(n int) []byte
		}{
			{"make", func(n int) []byte { return make([]byte, n) }},
			{"Alloc", func(n int) []byte { return Alloc(n, n) }},
		} {
			b.Run(fmt.Sprintf("%dMiB/%s", size>>20, alloc.name), func(b *testing.B) {
				b.SetBytes(int64(size))
				for range b.N {
					b.StopTimer()
					sink = nil
					debug.FreeOSMemory()
					b.StartTimer()
					buf := alloc.fn(size)
					copy(buf, src)
					sink = buf
				}
			})
		}
	}
}
