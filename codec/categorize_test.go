package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// categorizeObjectChain is the chain of a Zarr v2 object array whose only
// filter is categorize, as zarr/meta builds it: the vlen layout's check
// (the array→bytes codec; Categorize decodes to that layout), the filter,
// then the compressor when there is one.
func categorizeObjectChain(t *testing.T, cfg string, n int, zlib bool) *Pipeline {
	t.Helper()
	codecs := []Codec{Vlen{Codec: "categorize"}, mustNew(t, cfg)}
	if zlib {
		codecs = append(codecs, mustNew(t, `{"id":"zlib","level":1}`))
	}
	p, err := NewPipeline(codecs, ArraySpec{Shape: []int{n}, DataType: DataType{Name: "string"}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestCategorizeObjectsPeer decodes chunks of object arrays that numcodecs
// encoded (Categorize, then Zlib) as numcodecs decodes them: astype u1,
// u2 and u4 in both byte orders and i1, labels with non-ASCII text and an
// empty label, values among the labels or not, and stored codes beyond the
// labels (which numcodecs decodes to "", as it does 0).
func TestCategorizeObjectsPeer(t *testing.T) {
	labels := []string{"foo", "ßàř", "日本語", "", "🙂 x", "a\nb", "back\\slash"}
	lab, _ := json.Marshal(labels)
	type item struct {
		Config string `json:"config"`
		// Values are encoded by numcodecs; Codes, when set, are the stored
		// codes instead (hostile: beyond the labels).
		Values []string `json:"values"`
		Codes  []int    `json:"codes"`
		Zlib   bool     `json:"zlib"`
	}
	values := append(append([]string{}, labels...), "qux", "FOO", "日本", "ßàř", "foo")
	var items []item
	for _, at := range []string{"|u1", "<u2", ">u2", "<u4", ">u4", "|i1"} {
		cfg := fmt.Sprintf(`{"id":"categorize","labels":%s,"dtype":"|O","astype":%q}`, lab, at)
		items = append(items, item{Config: cfg, Values: values}, item{Config: cfg, Values: values, Zlib: true})
	}
	u1 := fmt.Sprintf(`{"id":"categorize","labels":%s,"dtype":"|O","astype":"|u1"}`, lab)
	u2 := fmt.Sprintf(`{"id":"categorize","labels":%s,"dtype":"|O","astype":"<u2"}`, lab)
	i1 := fmt.Sprintf(`{"id":"categorize","labels":%s,"dtype":"|O","astype":"|i1"}`, lab)
	items = append(items,
		item{Config: u1, Codes: []int{0, 1, 7, 8, 255, 3}, Zlib: true},
		item{Config: u2, Codes: []int{65535, 2, 9, 0}},
		item{Config: i1, Codes: []int{-1, -128, 127, 4}},
	)
	dir := t.TempDir()
	manifest, _ := json.Marshal(items)
	if err := os.WriteFile(filepath.Join(dir, "manifest.json"), manifest, 0o644); err != nil {
		t.Fatal(err)
	}
	peertest.Oracle(t, "codec/categorize_objects_peer.py", dir)
	for i, it := range items {
		chunk, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.chunk", i)))
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("%d.want", i)))
		if err != nil {
			t.Fatal(err)
		}
		n := len(it.Values) + len(it.Codes)
		name := fmt.Sprintf("item %d (%s, zlib %v, codes %v)", i, it.Config[len(it.Config)-14:], it.Zlib, it.Codes)
		got, err := categorizeObjectChain(t, it.Config, n, it.Zlib).Decode(chunk)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		equalBytes(t, name, got, want)
		if it.Codes != nil {
			continue
		}
		// And numcodecs' encoding is ours.
		enc, err := mustNew(t, it.Config).(BytesToBytes).Encode(vlenLayout(it.Values))
		if err != nil {
			t.Errorf("%s: encode: %v", name, err)
			continue
		}
		if !it.Zlib {
			equalBytes(t, name+": encoding", enc, chunk)
		}
	}
}

// TestCategorizeObjectsHostile: chunks that are not whole codes, or hold
// another number of elements than the chunk, are corrupt; configurations
// that do not decode to strings are unsupported.
func TestCategorizeObjectsHostile(t *testing.T) {
	const u2 = `{"id":"categorize","labels":["a","b"],"dtype":"|O","astype":"<u2"}`
	for _, c := range []struct {
		name  string
		cfg   string
		n     int
		chunk []byte
	}{
		{"odd bytes of u2", u2, 2, []byte{1, 0, 2}},
		{"too few codes", u2, 3, []byte{1, 0, 2, 0}},
		{"too many codes", u2, 1, []byte{1, 0, 2, 0}},
		{"empty chunk", u2, 1, nil},
	} {
		_, err := categorizeObjectChain(t, c.cfg, c.n, false).Decode(c.chunk)
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: %v, want corrupt", c.name, err)
		}
	}
	for _, cfg := range []Config{
		{"labels": json.RawMessage(`["a"]`), "dtype": json.RawMessage(`"|O"`), "astype": json.RawMessage(`"<f4"`)},
		{"labels": json.RawMessage(`["a"]`), "dtype": json.RawMessage(`"|O"`), "astype": json.RawMessage(`"|O"`)},
		{"labels": json.RawMessage(`["a", 2]`), "dtype": json.RawMessage(`"|O"`)},
		{"labels": json.RawMessage(`[null]`), "dtype": json.RawMessage(`"|O"`)},
		{"labels": json.RawMessage(`["a"]`), "dtype": json.RawMessage(`"<i4"`)},
	} {
		if _, err := New("categorize", cfg); !errors.Is(err, ErrUnsupported) {
			t.Errorf("%v: %v, want unsupported", cfg, err)
		}
	}
	// numcodecs' Categorize cannot be made without labels.
	if _, err := New("categorize", Config{"dtype": json.RawMessage(`"|O"`)}); err == nil {
		t.Error("categorize without labels: no error")
	}
}

// FuzzCategorizeObjectChain: whatever a chunk holds, the chain of an object
// array serialised by categorize (codes ">u2") never panics, and what it
// decodes is n elements, each a label or "".
func FuzzCategorizeObjectChain(f *testing.F) {
	const cfg = `{"id":"categorize","labels":["a","ßb",""],"dtype":"|O","astype":">u2"}`
	f.Add([]byte{0, 1, 0, 2, 0, 3}, 3)
	f.Add([]byte{0xff, 0xff, 0, 4, 0x80, 0}, 3) // codes beyond the labels
	f.Add([]byte{0, 1, 0}, 2)                   // not whole codes
	f.Add([]byte{}, 0)
	f.Add([]byte{0, 1}, 1<<20)
	for _, b := range hostileSeeds(f, "raw-") {
		f.Add(b, 4)
	}
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		if n < 0 || n > 1<<20 {
			return
		}
		out, err := categorizeObjectChain(t, cfg, n, false).Decode(data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error %v is not ErrCorrupt", err)
			}
			return
		}
		elems, err := splitVlen("test", out, n)
		if err != nil {
			t.Fatalf("decoded %d elements of %d: %v", len(elems), n, err)
		}
		for _, e := range elems {
			if s := string(e); s != "a" && s != "ßb" && s != "" {
				t.Fatalf("element %q is no label", s)
			}
		}
	})
}
