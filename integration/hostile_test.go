package integration

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// The hostile mount tests put every hostile input of the unit tests (the
// metadata documents of zarr/testdata/hostile/meta, the chunks of
// codec/testdata/hostile, symbolic links out of the store, zip members
// named ../../x or /etc/passwd) beside a good array in one store, mount it
// for real and read each node with a subprocess: every broken node fails
// with EIO or EOPNOTSUPP (by its error class), logs one line, and the good
// sibling reads byte for byte.

// hostileChains mirrors codec/hostile_test.go: the codec chain of each
// hostile chunk, by the prefix of its file name.
var hostileChains = map[string]string{
	"raw":    `[` + hBytes + `]`,
	"gzip":   `[` + hBytes + `, {"name": "gzip", "configuration": {"level": 5}}]`,
	"zlib":   `[` + hBytes + `, {"name": "zlib", "configuration": {"level": 5}}]`,
	"zstd":   `[` + hBytes + `, {"name": "zstd", "configuration": {"level": 3, "checksum": true}}]`,
	"blosc":  `[` + hBytes + `, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}]`,
	"bloscz": `[` + hBytes + `, {"name": "blosc", "configuration": {"cname": "zstd", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}]`,
	"lz4":    `[` + hBytes + `, {"name": "numcodecs.lz4", "configuration": {"acceleration": 1}}]`,
	"crc32c": `[` + hBytes + `, {"name": "crc32c"}]`,
	"bz2":    `[` + hBytes + `, {"name": "numcodecs.bz2", "configuration": {"level": 9}}]`,
	"lzma":   `[` + hBytes + `, {"name": "numcodecs.lzma", "configuration": {}}]`,
	"shard":  `[{"name": "sharding_indexed", "configuration": {"chunk_shape": [32, 32], "codecs": [` + hBytes + `], "index_codecs": [` + hBytes + `, {"name": "crc32c"}], "index_location": "end"}}]`,
	"vlen":   `[{"name": "vlen-utf8"}]`,
	"vlenz":  `[{"name": "vlen-utf8"}, {"name": "gzip", "configuration": {"level": 5}}]`,
	"vlenzs": `[{"name": "vlen-utf8"}, {"name": "zstd", "configuration": {"level": 3}}]`,
	"vlenb":  `[{"name": "vlen-utf8"}, {"name": "blosc", "configuration": {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 2, "blocksize": 0}}]`,
	"vlenl":  `[{"name": "vlen-utf8"}, {"name": "numcodecs.lzma", "configuration": {"format": 2}}]`,
	"vlenl2": `[{"name": "vlen-utf8"}, {"name": "numcodecs.lzma", "configuration": {"format": 3, "filters": [{"id": 33, "dict_size": 1073741824}]}}]`,
}

const hBytes = `{"name": "bytes", "configuration": {"endian": "little"}}`

// hostileUnsupported names the hostile inputs whose error is "unsupported"
// (EOPNOTSUPP); every other one is corrupt or invalid (EIO).
var hostileUnsupported = []string{
	"blosc-version-unknown",
	"v2-chunk-too-large", "v2-dtype-unknown", "v2-compressor-unknown",
	"v3-must-understand-member", "v3-must-understand-true", "v3-must-understand-codec",
	"v3-chunk-grid-unknown", "v3-data-type-unknown", "v3-storage-transformer",
}

// hostileNoData names the v3 documents whose node type cannot be told:
// they show as directories that fail to list (EIO) but whose document and
// info.txt open by name.
var hostileNoData = []string{"v3-not-json", "v3-node-type-unknown"}

// v3ArrayDoc returns a zarr.json for a 64×64 int16 array (or 64 strings)
// in one chunk with the given codecs.
func v3ArrayDoc(codecs string, vlen bool) string {
	shape, dtype, fill := "[64, 64]", `"int16"`, "0"
	if vlen {
		shape, dtype, fill = "[64]", `"string"`, `""`
	}
	return `{"zarr_format": 3, "node_type": "array", "shape": ` + shape + `, "data_type": ` + dtype + `,
 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": ` + shape + `}},
 "chunk_key_encoding": {"name": "default"}, "fill_value": ` + fill + `, "codecs": ` + codecs + `}`
}

// hostileRef is the content of every good array: 64×64 int16.
func hostileRef() []byte {
	r := rand.New(rand.NewPCG(9, 9))
	b := make([]byte, 8192)
	for i := range b {
		b[i] = byte(r.IntN(16))
	}
	return b
}

func gzipBytes(t *testing.T, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// gzipBomb returns a gzip stream of 1 GiB of zeros.
func gzipBomb(t *testing.T) []byte {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	zeros := make([]byte, 1<<20)
	for range 1024 {
		w.Write(zeros)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func writeTree(t *testing.T, root string, files map[string][]byte) {
	t.Helper()
	for name, b := range files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// errnoAllProgram prints, for each path argument, 0 when it opens and
// reads to the end, or the errno of the first failure.
const errnoAllProgram = `
import sys
for p in sys.argv[1:]:
    try:
        with open(p, "rb") as f:
            while f.read(1 << 20):
                pass
        print(0)
    except OSError as e:
        print(e.errno)
`

// readErrnos reads every path in one subprocess and returns the errno of each.
func readErrnos(t *testing.T, paths []string) []int {
	t.Helper()
	out, stderr, err := runTool(peertest.Python, append([]string{"-c", errnoAllProgram}, paths...)...)
	if err != nil {
		t.Fatalf("python: %v\n%s", err, stderr)
	}
	lines := strings.Fields(string(out))
	if len(lines) != len(paths) {
		t.Fatalf("python printed %d errnos for %d paths:\n%s", len(lines), len(paths), out)
	}
	errnos := make([]int, len(lines))
	for i, l := range lines {
		fmt.Sscan(l, &errnos[i])
	}
	return errnos
}

// hostileCase is one broken node of a mounted store.
type hostileCase struct {
	node string // node name in the mount
	file string // "data" or "data.txt"; "" when the node has no data file
	want syscall.Errno
}

func errnoFor(name string) syscall.Errno {
	if slices.Contains(hostileUnsupported, name) {
		return syscall.EOPNOTSUPP
	}
	return syscall.EIO
}

// checkHostileMount reads the good array, every broken node twice, and the
// good array again; it checks the errnos, the bytes and the log.
func checkHostileMount(t *testing.T, m *mounted, cases []hostileCase, good map[string][]byte) {
	t.Helper()
	checkGood := func(when string) {
		for path, ref := range good {
			out := run(t, "cat", filepath.Join(m.dir, path))
			if !bytes.Equal(out, ref) {
				t.Errorf("%s: cat %s: %d bytes differ from the reference (%d bytes)", when, path, len(out), len(ref))
			}
		}
	}
	checkGood("before the hostile reads")
	var paths []string
	var want []syscall.Errno
	for _, c := range cases {
		if c.file == "" {
			continue
		}
		paths = append(paths, filepath.Join(m.dir, c.node, c.file))
		want = append(want, c.want)
	}
	start := time.Now()
	for round := range 2 {
		got := readErrnos(t, paths)
		for i, p := range paths {
			if got[i] != int(want[i]) {
				t.Errorf("round %d: reading %s: errno %d, want %d (%v)", round, strings.TrimPrefix(p, m.dir+"/"), got[i], want[i], want[i])
			}
		}
	}
	t.Logf("%d broken nodes read twice in %v", len(paths), time.Since(start).Round(time.Millisecond))
	for _, c := range cases {
		dir := filepath.Join(m.dir, c.node)
		entries, err := os.ReadDir(dir)
		if c.file == "" {
			// A node of no known kind lists its document and info.txt
			// (which says what is wrong), and no data.
			for _, name := range []string{"zarr.json", "info.txt"} {
				if b, err := os.ReadFile(filepath.Join(dir, name)); err != nil || len(b) == 0 {
					t.Errorf("%s/%s: %v", c.node, name, err)
				}
			}
		}
		if err != nil {
			t.Errorf("%s: the broken node does not list: %v", c.node, err)
			continue
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		if !slices.Contains(names, "info.txt") || c.file != "" && !slices.Contains(names, c.file) || c.file == "" && slices.Contains(names, "data") {
			t.Errorf("%s: lists %q", c.node, names)
		}
		if info, err := os.ReadFile(filepath.Join(dir, "info.txt")); err != nil || len(info) == 0 {
			t.Errorf("%s/info.txt: %v", c.node, err)
		}
	}
	checkGood("after the hostile reads")
	// One log line per broken node, however often it was read. The log
	// reaches m.stderr through a pipe: wait until every node is there.
	logged := m.stderr.String()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); {
		missing := false
		for _, c := range cases {
			if c.file != "" && !strings.Contains(logged, `"/`+c.node+`"`) {
				missing = true
				break
			}
		}
		if !missing {
			break
		}
		time.Sleep(50 * time.Millisecond)
		logged = m.stderr.String()
	}
	for _, c := range cases {
		if c.file == "" {
			continue
		}
		if n := strings.Count(logged, `"/`+c.node+`"`); n != 1 {
			t.Errorf("%s: logged %d times, want once", c.node, n)
		}
	}
	if t.Failed() {
		t.Logf("mount log:\n%s", logged)
	}
}

// TestMountHostileV3 mounts a v3 directory store holding a good array, an
// array per hostile chunk, an array per hostile v3 metadata document and
// symbolic links leading out of the store.
func TestMountHostileV3(t *testing.T) {
	needFuse(t)
	repo := peertest.RepoRoot()
	base := t.TempDir()
	root := filepath.Join(base, "store")
	outside := filepath.Join(base, "outside")
	ref := hostileRef()
	files := map[string][]byte{
		"zarr.json":      []byte(`{"zarr_format": 3, "node_type": "group"}`),
		"good/zarr.json": []byte(v3ArrayDoc(hostileChains["gzip"], false)),
		"good/c/0/0":     gzipBytes(t, ref),
		// Valid, but costly for a reader that takes a chunk at a time:
		// 10^11 one-element chunks, none stored (issue 36).
		"tiny-chunks/zarr.json": []byte(tinyChunksDoc),
	}
	var cases []hostileCase
	chunkDir := filepath.Join(repo, "codec", "testdata", "hostile")
	entries, err := os.ReadDir(chunkDir)
	if err != nil {
		t.Fatal(err)
	}
	addChunk := func(name string, chunk []byte) {
		prefix, _, _ := strings.Cut(name, "-")
		chain, ok := hostileChains[prefix]
		if !ok {
			t.Fatalf("%s: no codec chain for %q", name, prefix)
		}
		vlen := strings.HasPrefix(prefix, "vlen")
		node := "chunk-" + name
		files[node+"/zarr.json"] = []byte(v3ArrayDoc(chain, vlen))
		key := node + "/c/0/0"
		if vlen {
			key = node + "/c/0"
		}
		files[key] = chunk
		file := "data"
		if vlen {
			file = "data.txt"
		}
		cases = append(cases, hostileCase{node: node, file: file, want: errnoFor(name)})
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(chunkDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		addChunk(strings.TrimSuffix(e.Name(), ".bin"), b)
	}
	if len(entries) < 40 {
		t.Fatalf("only %d hostile chunks in %s", len(entries), chunkDir)
	}
	addChunk("gzip-bomb-1GiB", gzipBomb(t))

	metaDir := filepath.Join(repo, "zarr", "testdata", "hostile", "meta")
	metas, err := filepath.Glob(filepath.Join(metaDir, "v3-*.zarr.json"))
	if err != nil || len(metas) < 20 {
		t.Fatalf("hostile v3 documents: %d, %v", len(metas), err)
	}
	for _, p := range metas {
		name := strings.TrimSuffix(filepath.Base(p), ".zarr.json")
		doc, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		node := "meta-" + name
		files[node+"/zarr.json"] = doc
		files[node+"/c/0"] = ref[:4]
		c := hostileCase{node: node, file: "data", want: errnoFor(name)}
		if slices.Contains(hostileNoData, name) {
			c.file = ""
		}
		cases = append(cases, c)
	}
	writeTree(t, root, files)

	// Symbolic links out of the store, to files holding valid content:
	// a chunk, an array's metadata, a whole array folder.
	secret := bytes.Repeat([]byte("SECRET!!"), 1024)
	writeTree(t, outside, map[string][]byte{
		"chunk":               secret,
		"array/zarr.json":     []byte(v3ArrayDoc(`[`+hBytes+`]`, false)),
		"array/c/0/0":         secret,
		"array-doc/zarr.json": []byte(v3ArrayDoc(`[`+hBytes+`]`, false)),
	})
	writeTree(t, root, map[string][]byte{
		"link-chunk/zarr.json":     []byte(v3ArrayDoc(`[`+hBytes+`]`, false)),
		"link-abs-chunk/zarr.json": []byte(v3ArrayDoc(`[`+hBytes+`]`, false)),
		"link-meta/c/0/0":          ref,
	})
	for link, target := range map[string]string{
		"link-chunk/c/0/0":     "../../../../outside/chunk",
		"link-abs-chunk/c/0/0": filepath.Join(outside, "chunk"),
		"link-meta/zarr.json":  "../../outside/array-doc/zarr.json",
		"link-dir":             "../outside/array",
		"link-abs-dir":         filepath.Join(outside, "array"),
	} {
		p := filepath.Join(root, filepath.FromSlash(link))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.Symlink(target, p); err != nil {
			t.Fatal(err)
		}
	}
	cases = append(cases,
		hostileCase{node: "link-chunk", file: "data", want: syscall.EIO},
		hostileCase{node: "link-abs-chunk", file: "data", want: syscall.EIO})

	m := mountStore(t, root)
	checkHostileMount(t, m, cases, map[string][]byte{"good/data": ref})
	checkHostileCat(t, root, cases)
	took, out, _, err := timed("head", "-c", "1048576", filepath.Join(m.dir, "tiny-chunks", "data"))
	if err != nil || !bytes.Equal(out, bytes.Repeat([]byte{7}, 1<<20)) || took > tinyReadTime {
		t.Errorf("tiny-chunks/data: 1 MiB read in %v: %v, %d bytes; want the fill value within %v", took, err, len(out), tinyReadTime)
	}

	// Nothing outside the store shows: the linked folders are not listed
	// and not reachable, the linked document is not served.
	top, err := os.ReadDir(m.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range top {
		if e.Name() == "link-dir" || e.Name() == "link-abs-dir" {
			t.Errorf("the mount lists %s, a link leading out of the store", e.Name())
		}
	}
	var probes []string
	for _, p := range []string{"link-dir/data", "link-abs-dir/data", "link-dir/zarr.json", "link-meta/zarr.json", "link-meta/data"} {
		probes = append(probes, filepath.Join(m.dir, p))
	}
	for i, e := range readErrnos(t, probes) {
		if e == 0 {
			out, _ := os.ReadFile(probes[i])
			t.Errorf("%s read without an error: %.40q", probes[i], out)
		}
	}
	checkNoSecret(t, m.dir, secret[:8])
}

// checkNoSecret walks the mount and fails if any readable file holds the
// content of a file outside the store.
func checkNoSecret(t *testing.T, dir string, secret []byte) {
	t.Helper()
	var paths []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (d.Name() == "data" || strings.HasSuffix(d.Name(), ".json")) && strings.Contains(p, "link") {
			paths = append(paths, p)
		}
		return nil
	})
	for _, p := range paths {
		if b, err := os.ReadFile(p); err == nil && bytes.Contains(b, secret) {
			t.Errorf("%s shows content from outside the store", p)
		}
	}
}

// TestMountHostileV2 mounts a v2 directory store holding a good array and
// an array per hostile .zarray, including one of 100 MiB.
func TestMountHostileV2(t *testing.T) {
	needFuse(t)
	repo := peertest.RepoRoot()
	root := filepath.Join(t.TempDir(), "store")
	ref := hostileRef()
	files := map[string][]byte{
		".zgroup":      []byte(`{"zarr_format": 2}`),
		"good/.zarray": []byte(`{"zarr_format": 2, "shape": [64, 64], "chunks": [64, 64], "dtype": "<i2", "compressor": {"id": "gzip", "level": 5}, "filters": null, "fill_value": 0, "order": "C"}`),
		"good/0.0":     gzipBytes(t, ref),
	}
	metas, err := filepath.Glob(filepath.Join(repo, "zarr", "testdata", "hostile", "meta", "v2-*.zarray"))
	if err != nil || len(metas) < 20 {
		t.Fatalf("hostile v2 documents: %d, %v", len(metas), err)
	}
	var cases []hostileCase
	for _, p := range metas {
		name := strings.TrimSuffix(filepath.Base(p), ".zarray")
		doc, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		node := "meta-" + name
		files[node+"/.zarray"] = doc
		files[node+"/0"] = ref[:4]
		cases = append(cases, hostileCase{node: node, file: "data", want: errnoFor(name)})
	}
	writeTree(t, root, files)
	// A 100 MiB .zarray (sparse: only its first bytes are written).
	big := filepath.Join(root, "meta-v2-100MiB", ".zarray")
	writeTree(t, root, map[string][]byte{"meta-v2-100MiB/.zarray": files["good/.zarray"]})
	if err := os.Truncate(big, 100<<20); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, hostileCase{node: "meta-v2-100MiB", file: "data", want: syscall.EIO})

	m := mountStore(t, root)
	checkHostileMount(t, m, cases, map[string][]byte{"good/data": ref})
	checkHostileCat(t, root, cases)
}

// checkHostileCat runs `zarrfs cat STORE NODE` on every broken node: exit
// status 1, no panic, one line of standard error that names the node.
func checkHostileCat(t *testing.T, store string, cases []hostileCase) {
	t.Helper()
	for _, c := range cases {
		if c.file == "" {
			continue
		}
		r := catArray(t, store, c.node)
		lines := strings.Split(strings.TrimRight(string(r.stderr), "\n"), "\n")
		if !isCleanExit1(r) || len(lines) != 1 || !strings.Contains(lines[0], c.node) || len(r.stdout) > 8192 {
			t.Errorf("zarrfs cat %s: %v, %d bytes out, stderr:\n%s", c.node, r.err, len(r.stdout), r.stderr)
		}
	}
}

// TestMountHostileZip mounts a zip whose members include ../../x,
// /etc/passwd and other names that are not valid keys: they are not
// shown, and the good array reads.
func TestMountHostileZip(t *testing.T) {
	needFuse(t)
	ref := hostileRef()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	add := func(name string, data []byte) {
		f, err := w.CreateRaw(&zip.FileHeader{Name: name, Method: zip.Store,
			CRC32: crc32.ChecksumIEEE(data), CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(len(data))})
		if err != nil {
			t.Fatal(err)
		}
		f.Write(data)
	}
	add("zarr.json", []byte(`{"zarr_format": 3, "node_type": "group"}`))
	add("good/zarr.json", []byte(v3ArrayDoc(`[`+hBytes+`]`, false)))
	add("good/c/0/0", ref)
	hostile := []string{"../../x", "/etc/passwd", "a/../../x", "..\\..\\x", "./zarr.json", "b//c/zarr.json", "nul\x00/zarr.json", "/abs/zarr.json", "../up/zarr.json"}
	for _, n := range hostile {
		add(n, []byte(v3ArrayDoc(`[`+hBytes+`]`, false)))
	}
	add("../up/c/0/0", bytes.Repeat([]byte("SECRET!!"), 1024))
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hostile.zip")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	m := mountStore(t, path)
	entries, err := os.ReadDir(m.dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	if want := []string{"dataset.nc", "good", "info.txt", "zarr.json"}; !slices.Equal(names, want) {
		t.Errorf("root lists %q, want %q", names, want)
	}
	if out := run(t, "cat", filepath.Join(m.dir, "good", "data")); !bytes.Equal(out, ref) {
		t.Errorf("good/data: %d bytes differ from the reference", len(out))
	}
	if doc := run(t, "cat", filepath.Join(m.dir, "zarr.json")); !strings.Contains(string(doc), `"group"`) {
		t.Errorf("zarr.json is %q, not the root group's document", doc)
	}
	var probes []string
	for _, p := range []string{"x", "etc/passwd", "etc", "up/data", "abs/data", "b/c/data", "a/x"} {
		probes = append(probes, filepath.Join(m.dir, p))
	}
	for i, e := range readErrnos(t, probes) {
		if e != int(syscall.ENOENT) {
			t.Errorf("%s: errno %d, want ENOENT: a member with an unsafe name is reachable", probes[i], e)
		}
	}
}
