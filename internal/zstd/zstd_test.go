package zstd

import (
	"bytes"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// zstdSamples returns inputs of the kinds blosc compresses: shuffled
// float32 series, runs, text, noise, and mixes of them.
func zstdSamples() map[string][]byte {
	r := rand.New(rand.NewPCG(5, 6))
	m := map[string][]byte{}
	for _, n := range []int{0, 1, 5, 100, 1000, 4096, 65536, 131072, 131073, 262144, 300000} {
		f := make([]byte, n/4*4)
		for i := 0; i+4 <= len(f); i += 4 {
			v := float32(math.Sin(float64(i)/4000)*100 + 280 + r.NormFloat64()*0.05)
			binary.LittleEndian.PutUint32(f[i:], math.Float32bits(v))
		}
		sh := make([]byte, len(f))
		byteShuffle(sh, f, 4)
		m["float32/"+strconv.Itoa(n)] = f
		m["shuffled/"+strconv.Itoa(n)] = sh
		noise := make([]byte, n)
		for i := range noise {
			noise[i] = byte(r.Uint32())
		}
		m["noise/"+strconv.Itoa(n)] = noise
		text := make([]byte, 0, n)
		words := []string{"zarr ", "blosc ", "chunk ", "array ", "the ", "of ", "\n", "shuffle "}
		for len(text) < n {
			text = append(text, words[r.IntN(len(words))]...)
		}
		m["text/"+strconv.Itoa(n)] = text[:n]
		runs := make([]byte, n)
		for i := 0; i < n; {
			k := min(n-i, 1+r.IntN(300))
			c := byte(r.IntN(4))
			for j := range k {
				runs[i+j] = c + byte(j%(1+int(c)))
			}
			i += k
		}
		m["runs/"+strconv.Itoa(n)] = runs
	}
	return m
}

// byteShuffle writes src's elements of ts bytes to dst byte plane by byte
// plane, as Blosc's byte shuffle does.
func byteShuffle(dst, src []byte, ts int) {
	n := len(src) / ts
	for i := range n {
		for j := range ts {
			dst[j*n+i] = src[i*ts+j]
		}
	}
}

// TestZstdFastMatchesKlauspost encodes the samples at every level and
// checks that zstdDecodeFast decodes each frame to the original (the
// frames it hands to the general decoder are counted, not failed).
func TestZstdFastMatchesKlauspost(t *testing.T) {
	fallbacks, total := 0, 0
	encoders := map[[2]int]*zstd.Encoder{}
	for _, level := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault, zstd.SpeedBetterCompression, zstd.SpeedBestCompression} {
		for _, single := range []bool{false, true} {
			enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(level), zstd.WithEncoderCRC(false), zstd.WithSingleSegment(single))
			if err != nil {
				t.Fatal(err)
			}
			encoders[[2]int{int(level), map[bool]int{false: 0, true: 1}[single]}] = enc
		}
	}
	for name, data := range zstdSamples() {
		for _, level := range []zstd.EncoderLevel{zstd.SpeedFastest, zstd.SpeedDefault, zstd.SpeedBetterCompression, zstd.SpeedBestCompression} {
			if len(data) > 1<<16 && level > zstd.SpeedDefault {
				continue // slow to encode, more so under -race
			}
			for _, single := range []bool{false, true} {
				enc := encoders[[2]int{int(level), map[bool]int{false: 0, true: 1}[single]}]
				frame := enc.EncodeAll(data, nil)
				got := make([]byte, len(data))
				total++
				if err := zstdDecodeFast(got, frame); err != nil {
					fallbacks++
					t.Logf("%q level %v single %v: %v", name, level, single, err)
					continue
				}
				if !bytes.Equal(got, data) {
					t.Fatalf("%q level %v single %v: decoded bytes differ", name, level, single)
				}
			}
		}
	}
	if fallbacks > 0 {
		t.Errorf("%d of %d frames went to the general decoder", fallbacks, total)
	}
}

// checkZstdFast fails t if zstdDecodeFast accepts frame for size bytes
// and klauspost/compress decodes it otherwise.
func checkZstdFast(t *testing.T, frame []byte, size int) {
	got := make([]byte, size)
	if zstdDecodeFast(got, frame) != nil {
		return
	}
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	want, err := d.DecodeAll(frame, make([]byte, 0, size))
	if err != nil {
		t.Fatalf("decoded %d bytes the general decoder rejects: %v", size, err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("decoded %d bytes, the general decoder %d different ones", size, len(want))
	}
}

func FuzzZstdFast(f *testing.F) {
	for name, data := range zstdSamples() {
		if len(data) > 5000 || len(name) == 0 {
			continue
		}
		enc, _ := zstd.NewWriter(nil, zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true))
		f.Add(enc.EncodeAll(data, nil), uint32(len(data)))
	}
	f.Fuzz(func(t *testing.T, frame []byte, size uint32) {
		if size > 1<<20 {
			return
		}
		checkZstdFast(t, frame, int(size))
	})
}

// BenchmarkDecode decodes numcodecs' frames of each kind, one after
// another, with DecodeInto and with klauspost/compress alone, and reports
// each against numcodecs' C zstd on the same frames ("x-numcodecs"): the
// gap that is this package's reason to exist, on one core:
//
//	go test -run NONE -bench Decode -cpu 1 ./internal/zstd/
func BenchmarkDecode(b *testing.B) {
	d, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecodeAllCapLimit(true))
	if err != nil {
		b.Fatal(err)
	}
	klauspost := func(dst, src []byte) error {
		out, err := d.DecodeAll(src, dst[:0:len(dst)])
		if err == nil && len(out) != len(dst) {
			err = errors.New("short frame")
		}
		return err
	}
	for _, k := range []struct {
		kind  string
		chunk int
	}{{"floats", 4 << 20}, {"quantised", 2 << 20}, {"planes", 64 << 10}} {
		for _, dec := range []struct {
			name string
			fn   func(dst, src []byte) error
		}{{"DecodeInto", DecodeInto}, {"klauspost", klauspost}} {
			b.Run(k.kind+"/"+dec.name, func(b *testing.B) {
				peertest.VsPeer(b, "numcodecs", "internal/zstd/decode_bench_program.py", k.chunk, dec.fn, k.kind, "16")
			})
		}
	}
}

// TestZstdFastDamaged flips bytes of valid frames and truncates them: the
// fast decoder must reject or agree with klauspost/compress, never panic.
func TestZstdFastDamaged(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(false), zstd.WithSingleSegment(true))
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range zstdSamples() {
		if len(data) > 70000 {
			continue
		}
		frame := enc.EncodeAll(data, nil)
		for range 40 {
			bad := bytes.Clone(frame)
			for range 1 + r.IntN(3) {
				if len(bad) > 0 {
					bad[r.IntN(len(bad))] ^= byte(1 + r.IntN(255))
				}
			}
			t.Run(name, func(t *testing.T) { checkZstdFast(t, bad, len(data)) })
		}
		for cut := range min(len(frame), 40) {
			checkZstdFast(t, frame[:len(frame)-cut-1], len(data))
		}
	}
}

// TestDecodeInto decodes every sample, single-segment or not, through
// DecodeInto (fast path or klauspost/compress) and checks the bytes, and
// that frames of the wrong size and damaged frames fail without writing
// past len(dst).
func TestDecodeInto(t *testing.T) {
	for _, single := range []bool{false, true} {
		enc, err := zstd.NewWriter(nil, zstd.WithEncoderCRC(false), zstd.WithSingleSegment(single))
		if err != nil {
			t.Fatal(err)
		}
		for name, data := range zstdSamples() {
			frame := enc.EncodeAll(data, nil)
			// dst is followed by guard bytes DecodeInto must leave alone.
			buf := make([]byte, len(data)+64)
			check := func(what string, n int, wantErr bool) {
				t.Helper()
				for i := range buf {
					buf[i] = 0xA5
				}
				err := DecodeInto(buf[:n], frame)
				if wantErr != (err != nil) {
					t.Fatalf("%s single %v %s: error %v, want error %v", name, single, what, err, wantErr)
				}
				for i := n; i < len(buf); i++ {
					if buf[i] != 0xA5 {
						t.Fatalf("%s single %v %s: byte %d past dst written", name, single, what, i-n)
					}
				}
				if !wantErr && !bytes.Equal(buf[:n], data) {
					t.Fatalf("%s single %v %s: decoded bytes differ", name, single, what)
				}
			}
			check("exact", len(data), false)
			if len(data) > 0 {
				check("one byte short", len(data)-1, true)
			}
			check("one byte long", len(data)+1, true)
		}
	}
	for _, bad := range [][]byte{nil, {0x28, 0xB5}, []byte("not a zstd frame at all")} {
		if err := DecodeInto(make([]byte, 10), bad); err == nil {
			t.Errorf("DecodeInto(%q) succeeded", bad)
		}
	}
}
