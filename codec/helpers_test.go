package codec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// testData returns n reproducible bytes that compress somewhat: runs and
// a small alphabet mixed with noise.
func testData(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 42))
	out := make([]byte, 0, n)
	for len(out) < n {
		switch r.IntN(3) {
		case 0:
			b := byte(r.IntN(256))
			for k := r.IntN(40); k > 0 && len(out) < n; k-- {
				out = append(out, b)
			}
		case 1:
			for k := r.IntN(40); k > 0 && len(out) < n; k-- {
				out = append(out, byte('a'+r.IntN(4)))
			}
		default:
			out = append(out, byte(r.IntN(256)))
		}
	}
	return out
}

// mustNew builds a codec from a numcodecs-style JSON object with an "id".
func mustNew(t testing.TB, config string) Codec {
	t.Helper()
	var cfg Config
	if err := json.Unmarshal([]byte(config), &cfg); err != nil {
		t.Fatalf("config %s: %v", config, err)
	}
	var id string
	if err := json.Unmarshal(cfg["id"], &id); err != nil {
		t.Fatalf("config %s: id: %v", config, err)
	}
	delete(cfg, "id")
	c, err := New(id, cfg)
	if err != nil {
		t.Fatalf("New(%s): %v", config, err)
	}
	return c
}

// jsonUnmarshal unmarshals the JSON text s into v.
func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// npyArray is a .npy file: its type string, shape, order and raw bytes.
type npyArray struct {
	Descr   string
	Fortran bool
	Shape   []int
	Data    []byte
}

var (
	npyDescr   = regexp.MustCompile(`'descr':\s*'([^']*)'`)
	npyFortran = regexp.MustCompile(`'fortran_order':\s*(True|False)`)
	npyShape   = regexp.MustCompile(`'shape':\s*\(([^)]*)\)`)
)

// readNpy reads a .npy file of a fixed-size dtype (versions 1 to 3).
func readNpy(t testing.TB, path string) npyArray {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 10 || string(b[:6]) != "\x93NUMPY" {
		t.Fatalf("%s: not a .npy file", path)
	}
	var hlen, start int
	if b[6] == 1 {
		hlen, start = int(b[8])|int(b[9])<<8, 10
	} else {
		hlen, start = int(b[8])|int(b[9])<<8|int(b[10])<<16|int(b[11])<<24, 12
	}
	header := string(b[start : start+hlen])
	var a npyArray
	m := npyDescr.FindStringSubmatch(header)
	if m == nil {
		t.Fatalf("%s: no descr in %q", path, header)
	}
	a.Descr = m[1]
	a.Fortran = npyFortran.FindStringSubmatch(header)[1] == "True"
	for _, f := range strings.Split(npyShape.FindStringSubmatch(header)[1], ",") {
		if f = strings.TrimSpace(f); f != "" {
			n, err := strconv.Atoi(f)
			if err != nil {
				t.Fatalf("%s: shape %q", path, header)
			}
			a.Shape = append(a.Shape, n)
		}
	}
	a.Data = b[start+hlen:]
	return a
}

// fixture is one encoded buffer of the numcodecs fixtures.
type fixture struct {
	Name    string // e.g. gzip/codec.01/encoded.03.dat
	Config  string // the codec's JSON configuration, with "id"
	Array   string // path of the decoded array (.npy)
	Encoded []byte
}

// fixtures lists the numcodecs fixtures in corpus directory dir (e.g.
// "gzip" or "delta/int32"): every codec.NN/encoded.MM.dat with the
// array.MM.npy it encodes.
func fixtures(t testing.TB, dir string) []fixture {
	t.Helper()
	root := filepath.Join(peertest.Corpus(t), "numcodecs", dir)
	codecs, err := filepath.Glob(filepath.Join(root, "codec.*"))
	if err != nil || len(codecs) == 0 {
		t.Fatalf("no numcodecs fixtures in %s", root)
	}
	var out []fixture
	for _, cdir := range codecs {
		cfg, err := os.ReadFile(filepath.Join(cdir, "config.json"))
		if err != nil {
			t.Fatal(err)
		}
		encs, _ := filepath.Glob(filepath.Join(cdir, "encoded.*.dat"))
		for _, e := range encs {
			num := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(e), "encoded."), ".dat")
			b, err := os.ReadFile(e)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(filepath.Dir(root), e)
			out = append(out, fixture{Name: rel, Config: string(cfg), Array: filepath.Join(root, "array."+num+".npy"), Encoded: b})
		}
	}
	return out
}

// peerCase is one buffer for numcodecs to encode and decode.
type peerCase struct {
	Config string // numcodecs JSON configuration with "id"
	DType  string // numpy dtype of the buffer for filters; "" for bytes
	Raw    []byte // decoded input
	// Ours is zarrfs's encoding of Raw, for numcodecs to decode.
	Ours []byte
	// Filled in by runNumcodecs:
	Theirs        []byte // numcodecs' encoding of Raw
	TheirsDecoded []byte // numcodecs' decoding of Ours
}

// runNumcodecs has numcodecs (python3) encode every case's Raw and decode
// every case's Ours.
func runNumcodecs(t *testing.T, cases []peerCase) {
	t.Helper()
	runPeer(t, "codec/numcodecs_peer.py", cases)
}

// runPeer runs an oracle program like codec/numcodecs_peer.py (a name for
// peertest.Oracle) over the cases.
func runPeer(t *testing.T, oracle string, cases []peerCase) {
	t.Helper()
	peertest.NeedPython(t)
	dir := t.TempDir()
	var jobs []map[string]string
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for i, c := range cases {
		jobs = append(jobs, map[string]string{
			"config":  c.Config,
			"dtype":   c.DType,
			"raw":     write(fmt.Sprintf("raw%d", i), c.Raw),
			"ours":    write(fmt.Sprintf("ours%d", i), c.Ours),
			"theirs":  filepath.Join(dir, fmt.Sprintf("theirs%d", i)),
			"decoded": filepath.Join(dir, fmt.Sprintf("decoded%d", i)),
		})
	}
	manifest, _ := json.Marshal(jobs)
	peertest.Oracle(t, oracle, write("manifest.json", manifest))
	for i := range cases {
		var err error
		if cases[i].Theirs, err = os.ReadFile(jobs[i]["theirs"]); err != nil {
			t.Fatal(err)
		}
		if cases[i].TheirsDecoded, err = os.ReadFile(jobs[i]["decoded"]); err != nil {
			t.Fatal(err)
		}
	}
}

// equalBytes reports a difference between got and want briefly.
func equalBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Errorf("%s: got %d bytes, want %d; first difference at byte %d", what, len(got), len(want), i)
	}
}
