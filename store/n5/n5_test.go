package n5

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/memory"
)

// TestConvert: the zarr.json made of each kind of attributes.json (the
// N5 spec's members; the registry's n5_default "Compatibility notes").
func TestConvert(t *testing.T) {
	for _, c := range []struct {
		name, attrs string
		want        map[string]string // top members of the result, as JSON
		codecs      string            // the n5_default inner codecs after transpose and bytes
	}{
		{"root group", `{"n5": "2.0.0", "title": "x"}`,
			map[string]string{"node_type": `"group"`, "attributes": `{"title":"x"}`}, ""},
		{"gzip dataset", `{"dimensions": [7, 5], "blockSize": [3, 2], "dataType": "uint16", "compression": {"type": "gzip", "level": -1, "useZlib": false}, "units": "m"}`,
			map[string]string{"node_type": `"array"`, "shape": `[7,5]`, "data_type": `"uint16"`, "fill_value": `0`,
				"chunk_grid":         `{"configuration":{"chunk_shape":[3,2]},"name":"regular"}`,
				"chunk_key_encoding": `{"configuration":{"separator":"/"},"name":"v2"}`, "attributes": `{"units":"m"}`},
			`[{"configuration":{"level":6},"name":"gzip"}]`},
		{"zlib", `{"dimensions": [4], "blockSize": [2], "dataType": "int8", "compression": {"type": "gzip", "level": 3, "useZlib": true}}`,
			nil, `[{"configuration":{"level":3},"name":"numcodecs.zlib"}]`},
		{"raw", `{"dimensions": [4], "blockSize": [2], "dataType": "float64", "compression": {"type": "raw"}}`, nil, `[]`},
		{"old compressionType", `{"dimensions": [4], "blockSize": [2], "dataType": "int32", "compressionType": "bzip2"}`,
			nil, `[{"configuration":{"level":9},"name":"numcodecs.bz2"}]`},
		{"no compression at all", `{"dimensions": [4], "blockSize": [2], "dataType": "int32"}`, nil, `[]`},
		{"xz", `{"dimensions": [4], "blockSize": [2], "dataType": "int32", "compression": {"type": "xz", "preset": 4}}`,
			nil, `[{"configuration":{"format":1,"preset":4},"name":"numcodecs.lzma"}]`},
		{"zstd", `{"dimensions": [4], "blockSize": [2], "dataType": "int32", "compression": {"type": "zstd", "level": 7}}`,
			nil, `[{"configuration":{"checksum":false,"level":7},"name":"zstd"}]`},
		{"blosc", `{"dimensions": [4], "blockSize": [2], "dataType": "float32", "compression": {"type": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0, "nthreads": 1}}`,
			nil, `[{"configuration":{"blocksize":0,"clevel":3,"cname":"zstd","shuffle":2,"typesize":4},"name":"blosc"}]`},
		{"lz4: no Zarr equivalent", `{"dimensions": [4], "blockSize": [2], "dataType": "int32", "compression": {"type": "lz4", "blockSize": 65536}}`,
			nil, `[{"configuration":{},"name":"n5.lz4"}]`},
	} {
		doc, err := Convert([]byte(c.attrs))
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(doc, &m); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if string(m["zarr_format"]) != "3" {
			t.Errorf("%s: zarr_format %s", c.name, m["zarr_format"])
		}
		for k, v := range c.want {
			if string(m[k]) != v {
				t.Errorf("%s: %s = %s, want %s", c.name, k, m[k], v)
			}
		}
		if c.codecs == "" {
			continue
		}
		var codecs []struct {
			Name          string
			Configuration struct{ Codecs []json.RawMessage }
		}
		if err := json.Unmarshal(m["codecs"], &codecs); err != nil || len(codecs) != 1 || codecs[0].Name != "n5_default" {
			t.Fatalf("%s: codecs %s", c.name, m["codecs"])
		}
		inner := codecs[0].Configuration.Codecs
		var dims []int
		json.Unmarshal(m["shape"], &dims)
		order, _ := json.Marshal(reversed(len(dims)))
		if len(inner) < 2 || string(inner[0]) != `{"configuration":{"order":`+string(order)+`},"name":"transpose"}` ||
			string(inner[1]) != `{"configuration":{"endian":"big"},"name":"bytes"}` {
			t.Errorf("%s: inner codecs %s", c.name, inner)
			continue
		}
		if got, _ := json.Marshal(inner[2:]); string(got) != c.codecs {
			t.Errorf("%s: compressor %s, want %s", c.name, got, c.codecs)
		}
	}
}

func reversed(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = n - 1 - i
	}
	return out
}

// TestConvertErrors: malformed datasets are errors naming the member.
func TestConvertErrors(t *testing.T) {
	for _, c := range []struct{ attrs, want string }{
		{`[1]`, "not a JSON object"},
		{`null`, "not a JSON object"},
		{`{"dimensions": "7", "blockSize": [1], "dataType": "int8"}`, "dimensions"},
		{`{"dimensions": [], "blockSize": [], "dataType": "int8"}`, "dimensions"},
		{`{"dimensions": [4, 4], "blockSize": [2], "dataType": "int8"}`, "blockSize"},
		{`{"dimensions": [4], "blockSize": [2], "dataType": 8}`, "dataType"},
		{`{"dimensions": [4], "blockSize": [2], "dataType": "int8", "compression": "gzip"}`, "compression"},
		{`{"dimensions": [4], "blockSize": [2], "dataType": "int8", "compression": {"type": 1}}`, "compression type"},
	} {
		if _, err := Convert([]byte(c.attrs)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error about %s", c.attrs, err, c.want)
		}
	}
}

// TestOpen: what is an N5 container, and the stores it shows.
func TestOpen(t *testing.T) {
	ctx := context.Background()
	mem := func(kv map[string]string) store.Store {
		m := map[string][]byte{}
		for k, v := range kv {
			m[k] = []byte(v)
		}
		st, err := memory.FromMap(m)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	for _, c := range []struct {
		name string
		kv   map[string]string
		n5   bool
	}{
		{"N5 root", map[string]string{"attributes.json": `{"n5": "4.0.0"}`}, true},
		{"attributes without a version", map[string]string{"attributes.json": `{"title": "x"}`}, false},
		{"not JSON", map[string]string{"attributes.json": `{`}, false},
		{"also Zarr", map[string]string{"attributes.json": `{"n5": "4.0.0"}`, "zarr.json": `{"zarr_format": 3, "node_type": "group"}`}, false},
		{"Zarr only", map[string]string{"zarr.json": `{"zarr_format": 3, "node_type": "group"}`}, false},
	} {
		if _, ok, err := Open(ctx, mem(c.kv)); ok != c.n5 || err != nil {
			t.Errorf("%s: N5 %v, %v; want %v", c.name, ok, err, c.n5)
		}
	}
	st, _, err := Open(ctx, mem(map[string]string{
		"attributes.json":            `{"n5": "4.0.0"}`,
		"a/attributes.json":          `{"dimensions": [2], "blockSize": [2], "dataType": "uint8", "compression": {"type": "raw"}}`,
		"a/0":                        "block",
		"implicit/b/attributes.json": `{"n5": "4.0.0"}`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]string{"zarr.json": `"group"`, "a/zarr.json": `"array"`, "implicit/zarr.json": `"group"`, "implicit/b/zarr.json": `"group"`} {
		b, err := st.Get(ctx, key)
		var m map[string]json.RawMessage
		if err != nil || json.Unmarshal(b, &m) != nil || string(m["node_type"]) != want {
			t.Errorf("%s: %s, %v; want node_type %s", key, b, err, want)
		}
		part, err := st.GetRange(ctx, key, store.Range(1, 5))
		if err != nil || string(part) != string(b[1:6]) {
			t.Errorf("%s: range %q, %v", key, part, err)
		}
	}
	for _, key := range []string{"missing/zarr.json", "a/0/zarr.json/x"} {
		if _, err := st.Get(ctx, key); !errors.Is(err, store.ErrNotExist) {
			t.Errorf("%s: %v, want not found", key, err)
		}
	}
	keys, prefixes, err := st.(store.Lister).ListDir(ctx, "")
	if err != nil || strings.Join(keys, ",") != "zarr.json" || strings.Join(prefixes, ",") != "a,implicit" {
		t.Errorf("ListDir: %v %v %v", keys, prefixes, err)
	}
	all, err := st.(store.Lister).ListPrefix(ctx, "")
	if err != nil || strings.Join(all, ",") != "a/0,a/zarr.json,implicit/b/zarr.json,zarr.json" {
		t.Errorf("ListPrefix: %v %v", all, err)
	}
}

// FuzzConvert: any attributes.json converts to a valid JSON object or
// gives an error, never a panic.
func FuzzConvert(f *testing.F) {
	for _, s := range []string{
		`{"n5": "2.0.0"}`,
		`{"dimensions": [7, 5], "blockSize": [3, 2], "dataType": "uint16", "compression": {"type": "gzip", "level": -1}}`,
		`{"dimensions": [1e30], "blockSize": [-1], "dataType": "float64", "compression": {"type": "blosc", "cname": 5}}`,
		`{"dimensions": [4], "blockSize": [2], "dataType": "int8", "compressionType": null}`,
		`{"dimensions": [` + strings.Repeat("1,", 40) + `1], "blockSize": [1], "dataType": "int8"}`,
		`{"dimensions": null}`, `"n5"`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, attrs []byte) {
		doc, err := Convert(attrs)
		if err != nil {
			return
		}
		var m map[string]json.RawMessage
		if json.Unmarshal(doc, &m) != nil || string(m["zarr_format"]) != "3" {
			t.Fatalf("Convert(%q) = %s", attrs, doc)
		}
	})
}
