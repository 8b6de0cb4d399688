package kerchunk

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/kerchunk/kerchunktest"
	"github.com/zarrfs/zarrfs/store/memory"
	"github.com/zarrfs/zarrfs/store/storetest"
)

// targets is an Opener over memory stores, one per root URL, counting the
// opens.
type targets struct {
	roots map[string]*memory.Store
	opens map[string]int
}

func newTargets(t testing.TB, files map[string][]byte) *targets {
	ts := &targets{roots: map[string]*memory.Store{}, opens: map[string]int{}}
	for u, b := range files {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		root, key := pu.Scheme+"://"+pu.Host+"/", strings.TrimPrefix(pu.Path, "/")
		if pu.Scheme == "file" {
			i := strings.LastIndexByte(pu.Path, '/')
			root, key = "file://"+pu.Path[:i+1], pu.Path[i+1:]
		}
		if ts.roots[root] == nil {
			ts.roots[root] = memory.NewNamed(root)
		}
		if err := ts.roots[root].Set(context.Background(), key, b); err != nil {
			t.Fatal(err)
		}
	}
	return ts
}

func (ts *targets) open(_ context.Context, root *url.URL) (store.Store, error) {
	ts.opens[root.String()]++
	if s := ts.roots[root.String()]; s != nil {
		return s, nil
	}
	return nil, fmt.Errorf("no store at %s: %w", root, store.ErrNotExist)
}

func mustURL(t testing.TB, s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestConformance runs the store suite over reference sets that hold the
// suite's values, half inline (base64), half as ranges of one file.
func TestConformance(t *testing.T) {
	for _, version := range []int{0, 1} {
		t.Run(fmt.Sprintf("v%d", version), func(t *testing.T) {
			storetest.RunReadOnly(t, func(t *testing.T, data map[string][]byte) store.Store {
				var blob []byte
				refs := map[string]any{}
				keys := slices.Sorted(func(yield func(string) bool) {
					for k := range data {
						if !yield(k) {
							return
						}
					}
				})
				for i, k := range keys {
					v := data[k]
					if i%2 == 0 {
						refs[k] = "base64:" + base64.StdEncoding.EncodeToString(v)
						continue
					}
					u := "s3://bucket/blob"
					if version == 1 {
						u = "{{u}}"
					}
					refs[k] = []any{u, len(blob), len(v)}
					blob = append(blob, v...)
				}
				var doc any = refs
				if version == 1 {
					doc = map[string]any{"version": 1, "templates": map[string]string{"u": "s3://bucket/blob"}, "refs": refs}
				}
				b, err := json.Marshal(doc)
				if err != nil {
					t.Fatal(err)
				}
				ts := newTargets(t, map[string][]byte{"s3://bucket/blob": blob})
				s, err := OpenJSON(b, Options{Name: "test.json", Open: ts.open})
				if err != nil {
					t.Fatal(err)
				}
				return s
			})
		})
	}
}

// TestReferences reads each kind of reference.
func TestReferences(t *testing.T) {
	file := []byte("0123456789abcdefghij")
	ts := newTargets(t, map[string][]byte{
		"https://data.example/dir/f.nc":    file,
		"file:///local/dir/f.nc":           file,
		"s3://bucket/deep/f.nc":            file,
		"https://refs.example/sets/sib.nc": []byte("sibling"),
	})
	doc := `{"version": 1,
		"templates": {"h": "https://data.example", "f": "{{h}}/{{d}}/{{n}}.nc"},
		"gen": [{"key": "g/{{i}}.{{j}}", "url": "{{h}}/dir/f.nc", "offset": "{{i * 10 + j * 2}}", "length": "{{2}}",
		         "dimensions": {"i": {"stop": 2}, "j": [0, 1, 2]}},
		        {"key": "w/{{name}}", "url": "s3://bucket/deep/{{name}}.nc", "dimensions": {"name": ["f"]}}],
		"refs": {
			".zgroup": "{\"zarr_format\":2}",
			"s": "plain text",
			"b64": "base64:AAEC/w==",
			"whole": ["s3://bucket/deep/f.nc"],
			"range": ["https://data.example/dir/f.nc", 3, 4],
			"tmpl": ["{{h}}/dir/f.nc", 10, 3],
			"func": ["{{f(d='dir', n='f')}}", 0, 2],
			"rel": ["sib.nc", 1, 3],
			"up": ["../sets/sib.nc"],
			"empty": ["s3://bucket/deep/f.nc", 5, 0],
			"obj": {"a": [1, 2]}
		}}`
	s, err := OpenJSON([]byte(doc), Options{Base: mustURL(t, "https://refs.example/sets/refs.json"), Open: ts.open})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, c := range []struct{ key, want string }{
		{".zgroup", `{"zarr_format":2}`},
		{"s", "plain text"},
		{"b64", "\x00\x01\x02\xff"},
		{"whole", string(file)},
		{"range", "3456"},
		{"tmpl", "abc"},
		{"func", "01"},
		{"rel", "ibl"},
		{"up", "sibling"},
		{"empty", ""},
		{"obj", `{"a": [1, 2]}`},
		{"g/0.0", "01"}, {"g/0.2", "45"}, {"g/1.1", "cd"}, {"g/1.2", "ef"},
		{"w/f", string(file)},
	} {
		got, err := s.Get(context.Background(), c.key)
		if err != nil || string(got) != c.want {
			t.Errorf("Get(%q) = %q, %v; want %q", c.key, got, err, c.want)
		}
	}
	// A part of a range reads only that part.
	if got, err := s.GetRange(context.Background(), "range", store.Range(1, 2)); err != nil || string(got) != "45" {
		t.Errorf("GetRange(range, 1, 2) = %q, %v", got, err)
	}
	if got, err := s.GetRange(context.Background(), "range", store.SuffixRange(3)); err != nil || string(got) != "456" {
		t.Errorf("GetRange(range, -3) = %q, %v", got, err)
	}
	if _, err := s.Get(context.Background(), "g/2.0"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("Get of a key no generator makes: %v, want ErrNotExist", err)
	}
	keys, prefixes, err := s.ListDir(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	wantKeys := []string{".zgroup", "b64", "empty", "func", "obj", "range", "rel", "s", "tmpl", "up", "whole"}
	if !slices.Equal(keys, wantKeys) || !slices.Equal(prefixes, []string{"g", "w"}) {
		t.Errorf("ListDir(\"\") = %q, %q; want %q, [g w]", keys, prefixes, wantKeys)
	}
	// One store per root, opened once.
	for root, n := range ts.opens {
		if n != 1 {
			t.Errorf("%s opened %d times", root, n)
		}
	}
	if !s.Remote() {
		t.Error("Remote() is false for references to https:// and s3://")
	}
	if sum := s.Summary(); !strings.Contains(sum, "Kerchunk reference set (JSON, version 1): https://refs.example/sets/refs.json") ||
		!strings.Contains(sum, "references: 18 (4 inline, 0 unreadable), to 4 files: ../sets/sib.nc, https://data.example/dir/f.nc, s3://bucket/deep/f.nc, …") {
		t.Errorf("Summary:\n%s", sum)
	}
}

// TestLocalPolicy checks which reference sets may name local files.
func TestLocalPolicy(t *testing.T) {
	ts := newTargets(t, map[string][]byte{"file:///data/x.nc": []byte("local bytes"), "file:///refs/y.nc": []byte("sibling")})
	doc := []byte(`{"abs": ["/data/x.nc", 0, 5], "url": ["file:///data/x.nc"], "rel": ["y.nc"]}`)
	for _, c := range []struct {
		base       string
		allowLocal bool
		refused    bool
	}{
		{"file:///refs/refs.json", false, false},
		{"https://refs.example/refs.json", false, true},
		{"s3://bucket/refs.json", false, true},
		{"https://refs.example/refs.json", true, false},
	} {
		s, err := OpenJSON(doc, Options{Base: mustURL(t, c.base), Open: ts.open, AllowLocal: c.allowLocal})
		if err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"abs", "url"} {
			_, err := s.Get(context.Background(), key)
			if c.refused != errors.Is(err, ErrNotAllowed) || (!c.refused && err != nil) {
				t.Errorf("base %s, allow %v: Get(%q): %v", c.base, c.allowLocal, key, err)
			}
			if c.refused && errors.Is(err, store.ErrNotExist) {
				t.Errorf("a refused reference matches ErrNotExist: %v", err)
			}
		}
		if c.base == "file:///refs/refs.json" {
			if got, err := s.Get(context.Background(), "rel"); err != nil || string(got) != "sibling" {
				t.Errorf("a relative path beside a local reference file: %q, %v", got, err)
			}
		}
	}
}

// TestHostile opens every reference set of testdata/hostile: keys under
// bad/ must fail with ErrBadReference (never ErrNotExist, never a panic),
// keys under ok/ must read, and no file may take long or much memory.
func TestHostile(t *testing.T) {
	names, err := filepath.Glob("testdata/hostile/*.json")
	if err != nil || len(names) == 0 {
		t.Fatal("no hostile reference sets", err)
	}
	file := bytes.Repeat([]byte{7}, 100)
	for _, name := range names {
		t.Run(filepath.Base(name), func(t *testing.T) {
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			ts := newTargets(t, map[string][]byte{"s3://b/f": file})
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			s, err := OpenJSON(data, Options{Base: mustURL(t, "https://refs.example/dir/refs.json"), Open: ts.open})
			if err != nil {
				if !errors.Is(err, ErrNotReferences) {
					t.Errorf("OpenJSON: %v, want ErrNotReferences", err)
				}
				return
			}
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			if grew := after.TotalAlloc - before.TotalAlloc; grew > 64<<20 {
				t.Errorf("opening allocated %d MiB", grew>>20)
			}
			var raw map[string]json.RawMessage
			json.Unmarshal(data, &raw)
			if r, ok := raw["refs"]; ok {
				raw = nil
				json.Unmarshal(r, &raw)
			}
			keys := slices.Collect(func(yield func(string) bool) {
				for k := range raw {
					if !yield(k) {
						return
					}
				}
			})
			// The generators' keys.
			for _, k := range []string{"bad/big/0.0", "bad/big/999999.999", "ok/lazy/0.0", "ok/lazy/999999.999", "bad/lazyneg/1999999", "bad/rec/0", "bad/div/0", "bad/ovf/2",
				"bad/neg/3", "bad/stmt/1", "bad/step/0", "bad/half/1", "ok/gen/0", "ok/gen/2"} {
				if bytes.Contains(data, []byte(k[:strings.LastIndexByte(k, '/')+1])) {
					keys = append(keys, k)
				}
			}
			for _, k := range keys {
				got, err := s.Get(context.Background(), k)
				switch {
				case strings.HasPrefix(k, "ok/"):
					if err != nil {
						t.Errorf("Get(%q): %v", k, err)
					}
				case strings.HasPrefix(k, "bad/"):
					if !errors.Is(err, ErrBadReference) && !errors.Is(err, ErrNotAllowed) || errors.Is(err, store.ErrNotExist) {
						t.Errorf("Get(%q) = %q, %v; want ErrBadReference", k, got, err)
					}
				}
			}
			for _, k := range []string{"bad/file", "bad/abs"} {
				if _, ok := raw[k]; ok {
					if _, err := s.Get(context.Background(), k); !errors.Is(err, ErrNotAllowed) {
						t.Errorf("Get(%q): %v; want ErrNotAllowed", k, err)
					}
				}
			}
			if _, _, err := s.ListDir(context.Background(), ""); err != nil {
				t.Errorf("ListDir: %v", err)
			}
			if _, err := s.Get(context.Background(), ".zgroup"); err != nil && !errors.Is(err, store.ErrNotExist) {
				t.Errorf("Get(.zgroup) beside a bad generator: %v", err)
			}
		})
	}
}

// TestGenBounded checks that a generator too large to expand allocates
// nothing for its entries: one whose key template can be read backwards
// is looked up key by key; any other fails its keys instead of letting
// them read as missing.
func TestGenBounded(t *testing.T) {
	doc := []byte(`{"version": 1, "gen": [{"key": "big/{{i}}", "url": "s3://b/f", "offset": "{{i % 50}}", "length": "2", "dimensions": {"i": {"stop": 1000000000}}},
		{"key": "big2/{{i}}{{j}}", "url": "s3://b/f", "dimensions": {"i": {"stop": 4294967296}, "j": {"stop": 4294967296}}},
		{"key": "big3/{{n}}/{{i}}", "url": "s3://b/{{n}}", "dimensions": {"n": ["f", "g"], "i": {"start": 10, "stop": -2000000000, "step": -3}}}],
		"refs": {"small/0": "x"}}`)
	file := []byte("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")
	ts := newTargets(t, map[string][]byte{"s3://b/f": file})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	s, err := OpenJSON(doc, Options{Open: ts.open})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("billion-entry generators allocated %d bytes", grew)
	}
	ctx := context.Background()
	for _, c := range []struct{ key, want string }{
		{"big/0", "01"}, {"big/999999999", string(file[49:51])}, {"big/123", string(file[23:25])}, {"big3/f/10", string(file)}, {"big3/f/-1999999997", string(file)},
	} {
		if got, err := s.Get(ctx, c.key); err != nil || string(got) != c.want {
			t.Errorf("Get(%q) = %q, %v; want %q", c.key, got, err, c.want)
		}
	}
	for _, k := range []string{"big/1000000000", "big/-1", "big/01", "big/x", "big/1.0", "big3/h/10", "big3/f/11", "big3/f/13", "big3/f/-2000000000"} {
		if _, err := s.Get(ctx, k); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("Get(%q): %v; want ErrNotExist", k, err)
		}
	}
	if _, err := s.Get(ctx, "big3/g/10"); err == nil || errors.Is(err, store.ErrNotExist) {
		t.Errorf("a generated reference to a missing file: %v", err)
	}
	if _, err := s.Get(ctx, "big2/11"); !errors.Is(err, ErrBadReference) || !strings.Contains(err.Error(), "more than") {
		t.Errorf("Get(big2/11): %v", err)
	}
	if b, err := s.Get(ctx, "small/0"); err != nil || string(b) != "x" {
		t.Errorf("a sibling of the generators: %q, %v", b, err)
	}
	_, prefixes, _ := s.ListDir(ctx, "")
	if !slices.Equal(prefixes, []string{"big", "big2", "big3", "small"}) {
		t.Errorf("ListDir shows %q", prefixes)
	}
}

// TestTemplates evaluates the Jinja subset.
func TestTemplates(t *testing.T) {
	rd := &renderer{templates: map[string]string{"u": "server/path", "f": "{{c}}-{{d}}", "n": "7"}}
	vars := map[string]value{"i": intValue(4), "s": strValue("ab")}
	for _, c := range []struct{ in, want string }{
		{"plain", "plain"},
		{"{{u}}", "server/path"},
		{"http://{{u}}_{{i}}", "http://server/path_4"},
		{"{{ (i + 1) * 1000 }}", "5000"},
		{"{{i // 3}},{{-7 // 2}},{{-7 % 2}},{{8 / 2}},{{i - 10}}", "1,-4,1,4,-6"},
		{"{{f(c='x', d=i + 1)}}", "x-5"},
		{"{{s ~ i}}{{s + 'c'}}{{n}}", "ab4abc7"},
	} {
		got, err := rd.render(c.in, vars)
		if err != nil || got != c.want {
			t.Errorf("render(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"{{", "{{x}}", "{{1 +}}", "{{(1}}", "{{'a' * 2}}", "{{7 / 2}}", "{{1 // 0}}",
		"{{9223372036854775807 + 1}}", "{% if %}", "{{f(1)}}", "{{u.x}}", "{{99999999999999999999}}"} {
		if got, err := rd.render(in, vars); err == nil {
			t.Errorf("render(%q) = %q, want an error", in, got)
		}
	}
	loop := &renderer{templates: map[string]string{"a": "{{a()}}"}}
	if _, err := loop.render("{{a()}}", nil); err == nil {
		t.Error("a template that calls itself rendered")
	}
}

// TestParquet reads a Parquet reference directory written from a JSON
// reference set, chunk for chunk equal to the JSON one.
func TestParquet(t *testing.T) {
	file := make([]byte, 4096)
	for i := range file {
		file[i] = byte(i * 7)
	}
	ts := newTargets(t, map[string][]byte{"https://data.example/f.nc": file})
	refs := map[string]json.RawMessage{
		".zgroup":     json.RawMessage(`"{\"zarr_format\": 2}"`),
		"x/.zarray":   json.RawMessage(`"{\"shape\": [10, 7], \"chunks\": [3, 2], \"dtype\": \"<i2\", \"zarr_format\": 2}"`),
		"x/.zattrs":   json.RawMessage(`"{\"_ARRAY_DIMENSIONS\": [\"a\", \"b\"]}"`),
		"g/.zgroup":   json.RawMessage(`"{\"zarr_format\": 2}"`),
		"g/s/.zarray": json.RawMessage(`"{\"shape\": [], \"chunks\": [], \"dtype\": \"<i2\", \"zarr_format\": 2}"`),
		"g/s/0":       json.RawMessage(`"base64:AQI="`),
	}
	n := 0
	for i := range 4 {
		for j := range 4 {
			if i == 2 && j == 1 {
				continue // a missing chunk
			}
			key := fmt.Sprintf("x/%d.%d", i, j)
			switch n % 3 {
			case 0:
				refs[key] = json.RawMessage(fmt.Sprintf(`["https://data.example/f.nc", %d, 12]`, n*12))
			case 1:
				refs[key] = json.RawMessage(fmt.Sprintf(`"base64:%s"`, base64.StdEncoding.EncodeToString([]byte(key))))
			case 2:
				refs[key] = json.RawMessage(fmt.Sprintf(`["f.nc", %d, 12]`, n*12+1))
			}
			n++
		}
	}
	files, err := kerchunktest.FromJSON(refs, 5)
	if err != nil {
		t.Fatal(err)
	}
	dir, err := memory.FromMap(files)
	if err != nil {
		t.Fatal(err)
	}
	if !IsParquetIndex(files[".zmetadata"]) {
		t.Fatal("IsParquetIndex is false")
	}
	base := mustURL(t, "https://data.example/refs.parq")
	pqs, err := OpenParquet(files[".zmetadata"], dir, Options{Base: base, Open: ts.open})
	if err != nil {
		t.Fatal(err)
	}
	jdoc, _ := json.Marshal(refs)
	js, err := OpenJSON(jdoc, Options{Base: base, Open: ts.open})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for k := range refs {
		want, err := js.Get(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		got, err := pqs.Get(ctx, k)
		if strings.HasSuffix(k, ".zarray") || strings.HasSuffix(k, ".zattrs") || strings.HasSuffix(k, ".zgroup") {
			// Metadata is held as JSON objects: the same document.
			var a, b any
			json.Unmarshal(want, &a)
			json.Unmarshal(got, &b)
			if err != nil || fmt.Sprint(a) != fmt.Sprint(b) {
				t.Errorf("%s: %s, %v; want %s", k, got, err, want)
			}
			continue
		}
		if err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %q, %v; want %q", k, got, err, want)
		}
	}
	for _, k := range []string{"x/2.1", "x/4.0", "x/0.4", "x/0", "x/00.1", "x/-1.0", "y/0.0", "g/s/1"} {
		if _, err := pqs.Get(ctx, k); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("Get(%q): %v; want ErrNotExist", k, err)
		}
	}
	_, prefixes, err := pqs.ListDir(ctx, "")
	if err != nil || !slices.Equal(prefixes, []string{"g", "x"}) {
		t.Errorf("ListDir: %q, %v", prefixes, err)
	}
	// A corrupt record file fails its chunks only.
	files["x/refs.0.parq"] = files["x/refs.0.parq"][:100]
	dir2, _ := memory.FromMap(files)
	pq2, err := OpenParquet(files[".zmetadata"], dir2, Options{Base: base, Open: ts.open})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pq2.Get(ctx, "x/0.0"); !errors.Is(err, ErrBadReference) {
		t.Errorf("a chunk of a truncated record: %v", err)
	}
	if _, err := pq2.Get(ctx, "x/3.3"); err != nil {
		t.Errorf("a chunk of an intact record: %v", err)
	}
}

// blockOnce is a store whose first GetRange waits for its context to end.
type blockOnce struct {
	store.Store
	started chan struct{}
	once    sync.Once
}

func (b *blockOnce) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	first := false
	b.once.Do(func() { first = true })
	if first {
		close(b.started)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return b.Store.GetRange(ctx, key, r)
}

// TestParquetCancelledLoad checks that a reader waiting for a record file
// that another, cancelled, reader was loading loads it itself.
func TestParquetCancelledLoad(t *testing.T) {
	refs := map[string]json.RawMessage{
		"x/.zarray": json.RawMessage(`"{\"shape\": [4], \"chunks\": [2], \"dtype\": \"|u1\", \"zarr_format\": 2}"`),
		"x/0":       json.RawMessage(`"base64:AQI="`),
	}
	files, err := kerchunktest.FromJSON(refs, 10)
	if err != nil {
		t.Fatal(err)
	}
	mem, _ := memory.FromMap(files)
	dir := &blockOnce{Store: mem, started: make(chan struct{})}
	s, err := OpenParquet(files[".zmetadata"], dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	first := make(chan error, 1)
	go func() {
		_, err := s.Get(ctx, "x/0")
		first <- err
	}()
	<-dir.started
	second := make(chan []byte, 1)
	go func() {
		b, err := s.Get(context.Background(), "x/0")
		if err != nil {
			t.Error(err)
		}
		second <- b
	}()
	time.Sleep(10 * time.Millisecond) // the second reader waits for the first's load
	cancel()
	if err := <-first; !errors.Is(err, context.Canceled) {
		t.Errorf("the cancelled reader: %v", err)
	}
	if b := <-second; string(b) != "\x01\x02" {
		t.Errorf("the waiting reader read %q", b)
	}
}

// TestIsParquetIndexLarge: the .zmetadata of a large hierarchy, which
// every folder store is sniffed for (storeurl), is not copied to be told
// apart from a Parquet index: no allocation without "record_size".
func TestIsParquetIndexLarge(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"metadata": {`)
	for i := range 20000 {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, `"a%d/.zarray": {"zarr_format": 2, "shape": [4]}`, i)
	}
	b.WriteString(`}, "zarr_consolidated_format": 1}`)
	doc := []byte(b.String())
	var is bool
	if allocs := testing.AllocsPerRun(3, func() { is = IsParquetIndex(doc) }); is || allocs != 0 {
		t.Errorf("IsParquetIndex of a %d-byte .zmetadata: %v, %v allocations", len(doc), is, allocs)
	}
	withRS := append(doc[:len(doc)-1:len(doc)-1], []byte(`, "record_size": 10}`)...)
	if !IsParquetIndex(withRS) {
		t.Error("IsParquetIndex is false with record_size")
	}
}
