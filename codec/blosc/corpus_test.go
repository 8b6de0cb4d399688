package blosc

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// TestCorpus decodes the numcodecs blosc fixtures (chunks libblosc wrote,
// with their arrays) and compares them with the arrays.
func TestCorpus(t *testing.T) {
	src := filepath.Join(peertest.Corpus(t), "numcodecs", "blosc")
	if _, err := os.Stat(src); err != nil {
		t.Skipf("no blosc fixtures: %v", err)
	}
	out := t.TempDir()
	peertest.Oracle(t, "codec/blosc/corpus_program.py", src, out)
	encoded, err := filepath.Glob(filepath.Join(src, "codec.*", "encoded.*.dat"))
	if err != nil {
		t.Fatal(err)
	}
	if len(encoded) == 0 {
		t.Fatal("no encoded fixtures found")
	}
	for _, enc := range encoded {
		rel, _ := filepath.Rel(src, enc)
		t.Run(rel, func(t *testing.T) {
			nn := filepath.Base(enc)[len("encoded.") : len("encoded.")+2]
			want, err := os.ReadFile(filepath.Join(out, nn+".raw"))
			if err != nil {
				t.Fatal(err)
			}
			chunk, err := os.ReadFile(enc)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, len(want))
			if err := Decompress(got, chunk); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatal("decoded bytes differ from the array")
			}
		})
	}
}
