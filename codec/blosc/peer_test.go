package blosc

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// peerCase is one configuration both sides encode and decode.
type peerCase struct {
	Name      string `json:"name"`
	CName     string `json:"cname"`
	CLevel    int    `json:"clevel"`
	Shuffle   int    `json:"shuffle"` // numcodecs: -1 auto, 0, 1, 2
	TypeSize  int    `json:"typesize"`
	BlockSize int    `json:"blocksize"`
	Size      int    `json:"size"`
	In        [2]int `json:"in"` // the input's offsets in in.bin
	Go        [2]int `json:"go"` // the Go chunk's offsets in go.bin
	kind      int
}

// resolveShuffle is numcodecs' AUTOSHUFFLE rule.
func resolveShuffle(sh, typeSize int) Shuffle {
	if sh == -1 {
		if typeSize == 1 {
			return BitShuffle
		}
		return ByteShuffle
	}
	return Shuffle(sh)
}

func peerCases() []peerCase {
	var cases []peerCase
	add := func(c peerCase) {
		c.Name = fmt.Sprintf("%03d_%s_l%d_s%d_t%d_b%d_n%d", len(cases), c.CName, c.CLevel, c.Shuffle, c.TypeSize, c.BlockSize, c.Size)
		c.kind = len(cases)
		cases = append(cases, c)
	}
	cnames := []string{"blosclz", "lz4", "lz4hc", "snappy", "zlib", "zstd"}
	levels := []int{1, 5, 9, 3, 7}
	sizes := []int{0, 1, 7, 100, 128, 129, 1000, 4099, 40000, 70001}
	i := 0
	for _, cn := range cnames {
		for _, sh := range []int{0, 1, 2, -1} {
			typeSizes := []int{1, 2, 3, 4, 8, 12}
			if sh == -1 { // AUTOSHUFFLE: bitshuffle for 1-byte items, else shuffle
				typeSizes = []int{1, 4}
			}
			for _, ts := range typeSizes {
				for _, n := range sizes {
					add(peerCase{CName: cn, CLevel: levels[i%len(levels)], Shuffle: sh, TypeSize: ts, Size: n})
					i++
				}
			}
			if sh >= 0 {
				// More than 1 MiB: several blocks, decoded in parallel.
				add(peerCase{CName: cn, CLevel: 5, Shuffle: sh, TypeSize: 4, Size: 1<<20 + 4100})
			}
		}
		if cn == "blosclz" || cn == "lz4" || cn == "zstd" {
			add(peerCase{CName: cn, CLevel: 9, Shuffle: 1, TypeSize: 8, Size: 1<<21 + 8})
		}
		for _, bs := range []int{1, 256, 1000, 4096, 100000} {
			add(peerCase{CName: cn, CLevel: 5, Shuffle: 1, TypeSize: 4, BlockSize: bs, Size: 70000})
		}
		add(peerCase{CName: cn, CLevel: 0, Shuffle: 1, TypeSize: 4, Size: 70000})
		add(peerCase{CName: cn, CLevel: 2, Shuffle: 2, TypeSize: 16, Size: 65536 + 16*5})
		add(peerCase{CName: cn, CLevel: 6, Shuffle: 1, TypeSize: 17, Size: 70000})
		// Types wider than the buffer (block size 1) and than 255 bytes
		// (c-blosc treats those as 1-byte types).
		add(peerCase{CName: cn, CLevel: 5, Shuffle: 2, TypeSize: 250, Size: 200})
		add(peerCase{CName: cn, CLevel: 5, Shuffle: 1, TypeSize: 255, Size: 255 * 300})
		add(peerCase{CName: cn, CLevel: 5, Shuffle: 1, TypeSize: 300, Size: 300 * 200})
	}
	return cases
}

// TestPeerNumcodecs checks both directions against python3-numcodecs
// (libblosc 1.21): chunks numcodecs writes decode here to the same bytes,
// chunks Compress writes decode there to the same bytes, and Compress
// chooses the block size and split flag c-blosc chooses.
func TestPeerNumcodecs(t *testing.T) {
	peertest.NeedPython(t)
	dir := t.TempDir()
	cases := peerCases()
	total := 0
	for _, c := range cases {
		total += c.Size
	}
	inBin, goBin := make([]byte, 0, total), make([]byte, 0, total+HeaderSize*len(cases))
	for i := range cases {
		c := &cases[i]
		src := testData(c.kind, c.Size, uint64(c.TypeSize))
		cn, err := ParseCompressor(c.CName)
		if err != nil {
			t.Fatal(err)
		}
		chunk, err := Compress(src, Options{Compressor: cn, Level: c.CLevel, Shuffle: resolveShuffle(c.Shuffle, c.TypeSize), TypeSize: c.TypeSize, BlockSize: c.BlockSize})
		if err != nil {
			t.Fatalf("%s: Compress: %v", c.Name, err)
		}
		c.In = [2]int{len(inBin), len(inBin) + len(src)}
		c.Go = [2]int{len(goBin), len(goBin) + len(chunk)}
		inBin, goBin = append(inBin, src...), append(goBin, chunk...)
	}
	for name, b := range map[string][]byte{"in.bin": inBin, "go.bin": goBin} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	manifest, err := json.Marshal(cases)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "cases.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	peertest.Oracle(t, "codec/blosc/peer_program.py", dir)
	var report map[string]struct {
		Py [2]int `json:"py"`
		Go string `json:"go"`
	}
	raw, err := os.ReadFile(filepath.Join(dir, "report.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &report); err != nil {
		t.Fatal(err)
	}
	pyBin, err := os.ReadFile(filepath.Join(dir, "py.bin"))
	if err != nil {
		t.Fatal(err)
	}
	outOfOrder := 0
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) {
			r, ok := report[c.Name]
			if !ok {
				t.Fatal("numcodecs reported nothing")
			}
			py := pyBin[r.Py[0]:r.Py[1]]
			goChunk := goBin[c.Go[0]:c.Go[1]]
			input := inBin[c.In[0]:c.In[1]]
			if c.Size == 0 {
				// numcodecs refuses to decode empty chunks, even its own.
				if !bytes.Equal(goChunk, py) {
					t.Errorf("empty chunk % x, c-blosc writes % x", goChunk, py)
				}
			} else if r.Go != "ok" {
				t.Errorf("numcodecs decoding the Go chunk: %s", r.Go)
			}
			got := make([]byte, c.Size)
			if err := Decompress(got, py); err != nil {
				t.Fatalf("decoding the numcodecs chunk (header % x): %v", py[:min(16, len(py))], err)
			}
			if !bytes.Equal(got, input) {
				t.Fatalf("decoding the numcodecs chunk: bytes differ")
			}
			if c.Size >= 3 {
				off, n := c.Size/3, c.Size/2
				part := make([]byte, n)
				if err := DecompressRange(part, py, off); err != nil {
					t.Fatalf("DecompressRange(%d, %d): %v", off, n, err)
				}
				if !bytes.Equal(part, input[off:off+n]) {
					t.Fatalf("DecompressRange(%d, %d): bytes differ", off, n)
				}
			}
			ph, err := ParseHeader(py)
			if err != nil {
				t.Fatal(err)
			}
			if !ph.Memcpyed() {
				for j := 1; j < ph.NumBlocks(); j++ {
					if binary.LittleEndian.Uint32(py[HeaderSize+4*j:]) < binary.LittleEndian.Uint32(py[HeaderSize+4*j-4:]) {
						outOfOrder++
						break
					}
				}
			}
			gh, err := ParseHeader(goChunk)
			if err != nil {
				t.Fatal(err)
			}
			if ph.BlockSize != gh.BlockSize || ph.TypeSize != gh.TypeSize {
				t.Errorf("block size %d typesize %d, c-blosc chose %d and %d", gh.BlockSize, gh.TypeSize, ph.BlockSize, ph.TypeSize)
			}
			const same = flagShuffle | flagBitShuffle | flagDontSplit | 0xe0
			if ph.Flags&same != gh.Flags&same || (c.CLevel == 0 || c.Size < 128) && ph.Flags != gh.Flags {
				t.Errorf("flags %#02x, c-blosc wrote %#02x", gh.Flags, ph.Flags)
			}
		})
	}
	if outOfOrder == 0 {
		t.Error("no numcodecs chunk had its blocks out of order: the threaded case is not covered")
	}
}

// TestPeerTrailingBytes: z5py writes Blosc chunks with bytes after the
// header's cbytes. c-blosc (through numcodecs) decodes them, ignoring the
// tail, and so does Decompress, whole and in part; a chunk shorter than
// cbytes stays corrupt.
func TestPeerTrailingBytes(t *testing.T) {
	peertest.NeedPython(t)
	out := peertest.Oracle(t, "codec/blosc/peer_trailing_bytes.py")
	n := int(binary.LittleEndian.Uint32(out))
	chunk, want := out[4:4+n+13], out[4+n+13:]
	got := make([]byte, len(want))
	if err := Decompress(got, chunk); err != nil || !bytes.Equal(got, want) {
		t.Fatalf("Decompress of a chunk with 13 trailing bytes: %v (equal %v)", err, bytes.Equal(got, want))
	}
	part := make([]byte, 100)
	if err := DecompressRange(part, chunk, 5000); err != nil || !bytes.Equal(part, want[5000:5100]) {
		t.Fatalf("DecompressRange: %v", err)
	}
	if err := Decompress(got, chunk[:n-1]); !errors.Is(err, ErrCorrupt) {
		t.Fatalf("chunk one byte short of cbytes: %v, want ErrCorrupt", err)
	}
}
