package icechunk

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/icechunk/icechunktest"
)

// TestWriteArray: a repository of one array with more chunk files than
// the test repository's (past 255 ids) reads each chunk back as written,
// in both spec versions, at a nested path.
func TestWriteArray(t *testing.T) {
	const n = 300
	meta := fmt.Sprintf(`{"zarr_format":3,"node_type":"array","shape":[%d],"data_type":"uint8",`+
		`"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[2]}},`+
		`"chunk_key_encoding":{"name":"default","configuration":{"separator":"/"}},"fill_value":0,`+
		`"codecs":[{"name":"bytes","configuration":{}}]}`, 2*n)
	var chunks []icechunktest.Chunk
	for i := range n {
		chunks = append(chunks, icechunktest.Chunk{Index: []uint32{uint32(i)}, Data: []byte{byte(i), byte(i >> 8)}})
	}
	ctx := context.Background()
	for _, spec := range []int{1, 2} {
		d := filepath.Join(t.TempDir(), "repo")
		icechunktest.WriteArray(t, d, spec, "g/arr", meta, []uint64{2 * n}, []uint64{2}, chunks)
		st, _ := dir.Open(d, dir.Options{ReadOnly: true})
		r, err := Open(ctx, st, Options{})
		if err != nil {
			t.Fatal(err)
		}
		s := mustRef(t, r, "main")
		for _, c := range chunks {
			key := fmt.Sprintf("g/arr/c/%d", c.Index[0])
			if b, err := s.Get(ctx, key); err != nil || !bytes.Equal(b, c.Data) {
				t.Fatalf("spec %d %s = %v, %v; want %v", spec, key, b, err, c.Data)
			}
		}
		if _, err := s.Get(ctx, "g/zarr.json"); err != nil {
			t.Errorf("spec %d: parent group: %v", spec, err)
		}
		r.Close()
	}
}
