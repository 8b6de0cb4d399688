package main

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/zarr/example"
)

// exampleStore writes the example hierarchy with the example command.
func exampleStore(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "example.zarr")
	if code, _, errOut := runCLI(t, "example", dir); code != 0 {
		t.Fatalf("zarrfs example: status %d: %s", code, errOut)
	}
	return dir
}

func TestInspectExample(t *testing.T) {
	st := exampleStore(t)

	code, out, errOut := runCLI(t, "ls", st)
	if code != 0 || errOut != "" {
		t.Fatalf("ls: status %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"array  temperature", "(24, 90, 180)", "float32", "bytes,zstd",
		"group  codecs/\n", "array  gravity", "()", "float64", "array  stations", "string", "vlen-utf8",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("ls output lacks %q:\n%s", want, out)
		}
	}

	code, out, _ = runCLI(t, "ls", filepath.Join(st, example.V2Root))
	if code != 0 || !strings.Contains(out, "precipitation") || !strings.Contains(out, "(12, 30, 60)") || !strings.Contains(out, "<f8") && !strings.Contains(out, "float64") {
		t.Errorf("ls v2: status %d:\n%s", code, out)
	}
	code, out, _ = runCLI(t, "ls", st, "codecs/gzip")
	if code != 0 || strings.Count(out, "\n") != 1 || !strings.Contains(out, "array  gzip  (20, 30)  int32  bytes,gzip") {
		t.Errorf("ls of an array: status %d:\n%s", code, out)
	}

	code, out, _ = runCLI(t, "tree", st)
	if code != 0 || !strings.HasPrefix(out, "/  group") || !strings.Contains(out, "└── ") || !strings.Contains(out, "│   ├── ") {
		t.Errorf("tree: status %d:\n%s", code, out)
	}

	code, out, _ = runCLI(t, "info", st, "temperature")
	if code != 0 || !strings.Contains(out, "float32") {
		t.Errorf("info: status %d:\n%s", code, out)
	}
	code, out, _ = runCLI(t, "info", "--json", st, "/temperature")
	var info struct {
		Path  string  `json:"path"`
		Kind  string  `json:"kind"`
		Shape []int64 `json:"shape"`
	}
	if err := json.Unmarshal([]byte(out), &info); code != 0 || err != nil || info.Kind != "array" || len(info.Shape) != 3 {
		t.Errorf("info --json: status %d, %v:\n%s", code, err, out)
	}
}

func TestCat(t *testing.T) {
	st := exampleStore(t)
	code, out, errOut := runCLI(t, "cat", st, "temperature")
	if code != 0 || errOut != "" {
		t.Fatalf("cat: status %d, stderr %q", code, errOut)
	}
	if len(out) != example.NumTimes*example.NumLats*example.NumLons*4 {
		t.Fatalf("cat temperature: %d bytes", len(out))
	}
	off := ((7*example.NumLats+30)*example.NumLons + 100) * 4
	if got := math.Float32frombits(binary.LittleEndian.Uint32([]byte(out[off:]))); got != example.Temperature(7, 30, 100) {
		t.Errorf("temperature[7,30,100] = %v, want %v", got, example.Temperature(7, 30, 100))
	}

	code, out, _ = runCLI(t, "cat", st, "gravity")
	if code != 0 || math.Float64frombits(binary.LittleEndian.Uint64([]byte(out))) != 9.80665 {
		t.Errorf("cat gravity: status %d, % x", code, out)
	}

	for _, c := range []struct{ path, want string }{
		{"codecs", "is a group"},
		{"no/such/node", "no/such/node"},
	} {
		code, out, errOut := runCLI(t, "cat", st, c.path)
		if code != 1 || out != "" || strings.Count(errOut, "\n") != 1 || !strings.Contains(errOut, c.want) || !strings.Contains(errOut, st) {
			t.Errorf("cat %s: status %d, stdout %d bytes, stderr %q", c.path, code, len(out), errOut)
		}
	}
}

func TestCatStrings(t *testing.T) {
	st := exampleStore(t)
	code, out, errOut := runCLI(t, "cat", st, "stations")
	if code == 1 && strings.Contains(errOut, "stations") {
		t.Skip("the example has no variable-length string array (vlen-utf8 not registered)")
	}
	want := "Reykjavík\nZürich\n東京\nSão Paulo\nMcMurdo\\nStation\nC:\\\\weather\n"
	if code != 0 || out != want {
		t.Errorf("cat stations: status %d, %q, want %q (stderr %q)", code, out, want, errOut)
	}
}

// TestInspectBrokenNode checks that ls, tree and info show a node whose
// zarr.json is not JSON as of unknown kind, with its error, beside its
// siblings; info then exits 1.
func TestInspectBrokenNode(t *testing.T) {
	st := t.TempDir()
	for name, doc := range map[string]string{
		"zarr.json":        `{"zarr_format": 3, "node_type": "group"}`,
		"good/zarr.json":   `{"zarr_format": 3, "node_type": "group"}`,
		"broken/zarr.json": `{"zarr_format": 3, "node_type": "array", "shape": [10`,
	} {
		p := filepath.Join(st, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, args := range [][]string{{"ls", st}, {"tree", st}, {"info", st, "broken"}, {"info", "--json", st, "broken"}} {
		code, out, errOut := runCLI(t, args...)
		switch {
		case args[0] == "info":
			// info prints what it can, then the error, and exits 1.
			if code != 1 || !strings.Contains(errOut, "not JSON") || strings.Count(errOut, "\n") != 1 {
				t.Errorf("%s: status %d, stderr %q; want 1 and the error", args[0], code, errOut)
			}
			if args[1] == "--json" {
				if !strings.Contains(out, `"kind": "unknown"`) {
					t.Errorf("info --json: %s", out)
				}
				continue
			}
		case code != 0 || errOut != "":
			t.Errorf("%s: status %d, stderr %q", args[0], code, errOut)
		}
		// ls prints the kind first, tree the name first.
		if !regexp.MustCompile(`(unknown +broken/|broken/ +unknown) +error: .*not JSON|kind: +unknown`).MatchString(out) {
			t.Errorf("%s: the broken node is not shown as unknown with its error:\n%s", args[0], out)
		}
		if args[0] != "info" && !regexp.MustCompile(`group +good/|good/ +group`).MatchString(out) {
			t.Errorf("%s: the good sibling is missing:\n%s", args[0], out)
		}
	}
}
