package diskcache

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
)

// BenchmarkHit reads 1 MiB values from the folder (b.N reads of 64
// entries in turn), by Get (a new buffer each) and by GetAlloc into one
// buffer reused (as the engine's pool does), against BenchmarkDirGet
// reading the same bytes from a directory store: the cost of a hit over a
// local read.
func BenchmarkHit(b *testing.B) {
	d := b.TempDir()
	f := &far{m: map[string][]byte{}}
	for i := range 64 {
		v := make([]byte, 1<<20)
		v[i] = 1
		f.m[fmt.Sprintf("c/%d", i)] = v
	}
	c, err := Open(d, Options{})
	if err != nil {
		b.Fatal(err)
	}
	<-c.scanned
	s := c.Wrap(f, "far://bench")
	ctx := context.Background()
	for i := range 64 {
		s.Get(ctx, fmt.Sprintf("c/%d", i))
	}
	for _, how := range []string{"Get", "GetAlloc"} {
		b.Run(how, func(b *testing.B) { readLoop(b, s, how) })
	}
	if f.reqs.Load() != 64 {
		b.Fatalf("%d requests", f.reqs.Load())
	}
}

// readLoop reads the 64 values c/N of s in turn, by Get or GetAlloc.
func readLoop(b *testing.B, s store.Store, how string) {
	ctx := context.Background()
	buf := make([]byte, 1<<20)
	alloc := func(n int) []byte { return buf[:n] }
	b.SetBytes(1 << 20)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var err error
		if how == "Get" {
			_, err = s.Get(ctx, fmt.Sprintf("c/%d", i%64))
		} else {
			_, err = s.(store.AllocGetter).GetAlloc(ctx, fmt.Sprintf("c/%d", i%64), alloc)
		}
		if err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkDirGet(b *testing.B) {
	d := b.TempDir()
	for i := range 64 {
		os.MkdirAll(filepath.Join(d, "c"), 0o755)
		os.WriteFile(filepath.Join(d, "c", fmt.Sprint(i)), make([]byte, 1<<20), 0o644)
	}
	s, err := dir.Open(d, dir.Options{ReadOnly: true})
	if err != nil {
		b.Fatal(err)
	}
	for _, how := range []string{"Get", "GetAlloc"} {
		b.Run(how, func(b *testing.B) { readLoop(b, s, how) })
	}
}

// BenchmarkMiss reads 1 MiB values through an empty cache, each written
// to the folder: the cost a cold read pays for the cache.
func BenchmarkMiss(b *testing.B) {
	d := b.TempDir()
	f := &far{m: map[string][]byte{}}
	for i := range 64 {
		f.m[fmt.Sprintf("c/%d", i)] = make([]byte, 1<<20)
	}
	c, err := Open(d, Options{})
	if err != nil {
		b.Fatal(err)
	}
	<-c.scanned
	ctx := context.Background()
	b.SetBytes(1 << 20)
	for i := 0; b.Loop(); i++ {
		if i%64 == 0 {
			b.StopTimer()
			Clear(d)
			b.StartTimer()
		}
		s := c.Wrap(f, fmt.Sprint("far://bench", i/64))
		if _, err := s.Get(ctx, fmt.Sprintf("c/%d", i%64)); err != nil {
			b.Fatal(err)
		}
	}
}
