package zarr

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store/dir"
)

// TestCorpusV2 reads every v2 array of the public corpus and compares it
// with zarr-python's reading. Arrays the engine does not support must say
// so with ErrUnsupported.
func TestCorpusV2(t *testing.T) {
	corpus := peertest.Corpus(t)
	refs := t.TempDir()
	out := peertest.Oracle(t, "zarr/read_corpus.py", corpus, refs)
	ctx := context.Background()
	var compared, unsupported []string
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var rec struct {
			Path  string    `json:"path"`
			Ref   string    `json:"ref"`
			Elems []*string `json:"elems"`
			Error string    `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("python output %q: %v", line, err)
		}
		rel, _ := filepath.Rel(corpus, rec.Path)
		if rec.Error != "" {
			t.Logf("%s: python cannot read it either: %s", rel, rec.Error)
			continue
		}
		st, err := dir.Open(rec.Path, dir.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		h, err := Open(ctx, st, Options{CacheSize: 4 << 20})
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		n, err := h.Node(ctx, "")
		if err != nil {
			t.Errorf("%s: %v", rel, err)
			continue
		}
		if n.Err != nil || n.Array == nil {
			t.Errorf("%s: %v", rel, n.Err)
			continue
		}
		a := n.Array
		if a.Err != nil {
			if !errors.Is(a.Err, ErrUnsupported) {
				t.Errorf("%s: %v", rel, a.Err)
			}
			unsupported = append(unsupported, rel+": "+a.Err.Error())
			continue
		}
		if rec.Elems != nil {
			var got []*string
			err := a.Elements(ctx, func(e []byte) error {
				s := hex.EncodeToString(e)
				got = append(got, &s)
				return nil
			})
			if err != nil {
				t.Errorf("%s: %v", rel, err)
				continue
			}
			if !slices.EqualFunc(got, rec.Elems, func(a, b *string) bool { return b != nil && *a == *b }) {
				t.Errorf("%s: elements differ from python's", rel)
			}
		} else {
			want, err := os.ReadFile(rec.Ref)
			if err != nil {
				t.Fatal(err)
			}
			got := make([]byte, a.Size())
			if k, err := a.ReadAt(ctx, got, 0); k != len(got) || err != nil && len(got) > 0 {
				t.Errorf("%s: ReadAt = %d, %v", rel, k, err)
				continue
			}
			if !bytes.Equal(got, want) {
				t.Errorf("%s: content differs from python's (%d bytes)", rel, len(want))
			}
		}
		compared = append(compared, rel)
	}
	t.Logf("compared %d arrays with python; unsupported here: %d\n%s", len(compared), len(unsupported), strings.Join(unsupported, "\n"))
	if len(compared) == 0 {
		t.Error("no corpus array compared")
	}
}
