package codec

import (
	"errors"
	"sort"
	"strings"
	"testing"
)

// FuzzPipelineDecode decodes arbitrary chunks through each codec chain of
// hostileChains, built by the registry as the engine builds them: no
// panic, only ErrCorrupt or ErrUnsupported, and the size the chunk must
// have.
func FuzzPipelineDecode(f *testing.F) {
	prefixes := make([]string, 0, len(hostileChains))
	for p := range hostileChains {
		prefixes = append(prefixes, p)
	}
	sort.Strings(prefixes)
	pipes := make([]*Pipeline, len(prefixes))
	index := map[string]uint8{}
	for i, p := range prefixes {
		pipes[i] = hostilePipeline(f, p+"-")
		index[p] = uint8(i)
		data := hostileData()
		if strings.HasPrefix(p, "vlen") {
			data = vlenOf(64)
		}
		enc, err := pipes[i].Encode(data)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(i), enc)
	}
	for name, b := range hostileCases(f) {
		prefix, _, _ := strings.Cut(name, "-")
		f.Add(index[prefix], b)
	}
	f.Fuzz(func(t *testing.T, which uint8, data []byte) {
		p := pipes[int(which)%len(pipes)]
		out, err := p.Decode(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("error %v is neither ErrCorrupt nor ErrUnsupported", err)
			}
			return
		}
		if want := p.Spec().ByteSize(); want >= 0 && len(out) != want {
			t.Fatalf("decoded %d bytes, want %d", len(out), want)
		}
	})
}
