// Package peertest runs the reference Zarr implementations that zarrfs's
// tests use as oracles: Debian's python3-zarr/python3-numcodecs (through
// /usr/bin/python3) and the npm package zarrita (installed in
// testdata/oracles/js by `make deps`).
//
// The oracle programs of the unit tests live as files in testdata/oracles:
// Python programs in a folder per package (codec/, zarr/, ...) and the node
// scripts with their pinned npm packages in js/. Oracle runs one by name.
//
// When a peer is missing a test is skipped, unless ZARRFS_REQUIRE_PEERS=1
// (set by `make test` and CI), in which case it fails: peer tests never
// silently skip in CI.
//
// It also holds what tests of several packages share around the peers and
// the processes they run: Buffer, for output written while a test reads it.
package peertest

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"
)

// Python is the interpreter that has Debian's zarr and numcodecs.
const Python = "/usr/bin/python3"

// RepoRoot returns the root of the zarrfs checkout.
func RepoRoot() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", ".."))
}

// required reports whether missing peers fail tests instead of skipping them.
func required() bool { return os.Getenv("ZARRFS_REQUIRE_PEERS") == "1" }

// Missing skips t, or fails it when peers are required, with why.
func Missing(t testing.TB, why string) {
	t.Helper()
	if required() {
		t.Fatalf("peer unavailable and ZARRFS_REQUIRE_PEERS=1: %s", why)
	}
	t.Skipf("peer unavailable: %s (install with `make deps`)", why)
}

// NeedPython skips (or fails) t unless /usr/bin/python3 can import zarr,
// numcodecs and numpy.
func NeedPython(t testing.TB) {
	t.Helper()
	NeedPythonModules(t, "import zarr, numcodecs, numpy", "python3-zarr, python3-numcodecs, python3-numpy")
}

// NeedPythonModules skips (or fails) t unless /usr/bin/python3 runs the
// import statement imports; debs names the Debian packages that provide
// the modules.
func NeedPythonModules(t testing.TB, imports, debs string) {
	t.Helper()
	if out, err := exec.Command(Python, "-c", imports).CombinedOutput(); err != nil {
		Missing(t, fmt.Sprintf("python3 cannot %q (Debian: %s): %s", imports, debs, bytes.TrimSpace(out)))
	}
}

// NeedCommands skips (or fails) t unless every one of commands is on the
// PATH; debs names the Debian packages that provide them.
func NeedCommands(t testing.TB, debs string, commands ...string) {
	t.Helper()
	for _, c := range commands {
		if _, err := exec.LookPath(c); err != nil {
			Missing(t, fmt.Sprintf("%s not found (Debian: %s)", c, debs))
		}
	}
}

// RunPython runs a Python program (source code) with args and returns its
// standard output; it fails t on a non-zero exit, showing standard error.
func RunPython(t testing.TB, program string, args ...string) []byte {
	t.Helper()
	NeedPython(t)
	cmd := exec.Command(Python, append([]string{"-c", program}, args...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python peer: %v\n%s", err, stderr.String())
	}
	return out
}

// OraclesDir is the folder of the oracle programs (testdata/oracles).
func OraclesDir() string {
	return filepath.Join(RepoRoot(), "internal", "peertest", "testdata", "oracles")
}

// JSDir is the folder holding the pinned npm packages (zarrita) and the
// node scripts that use them.
func JSDir() string { return filepath.Join(OraclesDir(), "js") }

// NeedNode skips (or fails) t unless node and the pinned zarrita are installed.
func NeedNode(t testing.TB) {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		Missing(t, "node not found")
	}
	if _, err := os.Stat(filepath.Join(JSDir(), "node_modules", "zarrita")); err != nil {
		Missing(t, "zarrita not installed in "+JSDir()+" (run `make deps`)")
	}
}

// Oracle runs the oracle program NAME, a path below OraclesDir such as
// "codec/vlen.py" or "js/read.mjs", with args and returns its standard
// output; it fails t on a non-zero exit, showing standard error. A .py
// program runs with /usr/bin/python3 (needing zarr, numcodecs and numpy), a
// .mjs script with node in JSDir (needing zarrita).
func Oracle(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	path := filepath.Join(OraclesDir(), filepath.FromSlash(name))
	var cmd *exec.Cmd
	switch filepath.Ext(name) {
	case ".py":
		NeedPython(t)
		// -P: the oracles folder is not put on sys.path, so no file there
		// can shadow a module the program imports.
		cmd = exec.Command(Python, append([]string{"-P", path}, args...)...)
	case ".mjs":
		NeedNode(t)
		cmd = exec.Command("node", append([]string{path}, args...)...)
		cmd.Dir = JSDir()
	default:
		t.Fatalf("oracle %s: neither .py nor .mjs", name)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle %s: %v\n%s", name, err, stderr.String())
	}
	return out
}

// Corpus returns the shared public test corpus (../shared/corpus next to
// the checkout, or $ZARRFS_CORPUS), skipping t when it is absent.
func Corpus(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("ZARRFS_CORPUS")
	if dir == "" {
		dir = filepath.Join(RepoRoot(), "..", "shared", "corpus")
	}
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("no test corpus at %s", dir)
	}
	return dir
}

// Files returns the contents of the files below the repository root that
// match pattern (filepath.Glob), in name order, for fuzz seeds; it fails
// when none matches, so that a moved directory cannot leave a corpus empty.
func Files(tb testing.TB, pattern string) [][]byte {
	tb.Helper()
	names, err := filepath.Glob(filepath.Join(RepoRoot(), pattern))
	if err != nil || len(names) == 0 {
		tb.Fatalf("no files %s: %v", pattern, err)
	}
	out := make([][]byte, len(names))
	for i, name := range names {
		if out[i], err = os.ReadFile(name); err != nil {
			tb.Fatal(err)
		}
	}
	return out
}
