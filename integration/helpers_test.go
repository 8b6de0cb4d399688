// Package integration holds zarrfs's end-to-end tests: they build the
// zarrfs binary, run it out of process and compare what it shows with what
// other Zarr implementations (zarr-python, zarrita) read and write.
package integration

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// zarrfsBin is the binary built once by TestMain.
var zarrfsBin string

// tmpRoot is a directory for the whole run, removed at its end.
var tmpRoot string

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	tmp, err := os.MkdirTemp("", "zarrfs-integration-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	tmpRoot = tmp
	zarrfsBin = filepath.Join(tmp, "zarrfs")
	// Built as make build builds it: static, without cgo, but for the
	// race detector, which needs cgo.
	args, cgo := []string{"build", "-o", zarrfsBin}, "CGO_ENABLED=0"
	if peertest.RaceBuild {
		args, cgo = append(args, "-race"), "CGO_ENABLED=1"
	}
	build := exec.Command("go", append(args, "./cmd/zarrfs")...)
	build.Dir = peertest.RepoRoot()
	build.Env = append(os.Environ(), cgo)
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "integration: building zarrfs: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

// result is what one run of the binary did.
type result struct {
	stdout, stderr []byte
	err            error
}

// runZarrfs runs the binary with args and a time limit and returns what it
// printed; it does not fail t on a non-zero exit.
func runZarrfs(t testing.TB, args ...string) result {
	t.Helper()
	cmd := exec.Command(zarrfsBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("zarrfs %s: %v", strings.Join(args, " "), err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		return result{stdout.Bytes(), stderr.Bytes(), err}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		<-done
		t.Fatalf("zarrfs %s: still running after 2 minutes", strings.Join(args, " "))
		return result{}
	}
}

// mustZarrfs runs the binary and fails t unless it exits 0.
func mustZarrfs(t testing.TB, args ...string) []byte {
	t.Helper()
	r := runZarrfs(t, args...)
	if r.err != nil {
		t.Fatalf("zarrfs %s: %v\n%s", strings.Join(args, " "), r.err, r.stderr)
	}
	return r.stdout
}

// catArray returns `zarrfs cat STORE PATH`.
func catArray(t testing.TB, store, node string) result {
	t.Helper()
	return runZarrfs(t, "cat", store, node)
}

// sameBytes fails t with a short description of the first difference unless
// got equals want.
func sameBytes(t testing.TB, what string, got, want []byte) {
	t.Helper()
	if bytes.Equal(got, want) {
		return
	}
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	t.Errorf("%s: %d bytes, want %d; first difference at byte %d: got %s, want %s",
		what, len(got), len(want), i, window(got, i), window(want, i))
}

func window(b []byte, i int) string {
	lo, hi := max(0, i-4), min(len(b), i+12)
	if lo >= hi {
		return "(end)"
	}
	return fmt.Sprintf("[%d:%d]=% x", lo, hi, b[lo:hi])
}

// isCleanExit1 reports whether a failed zarrfs run exited with status 1
// and no Go panic.
func isCleanExit1(r result) bool {
	var ee *exec.ExitError
	if !errors.As(r.err, &ee) || ee.ExitCode() != 1 {
		return false
	}
	return !strings.Contains(string(r.stderr), "panic") && !strings.Contains(string(r.stderr), "goroutine ")
}

// isUnsupported reports whether a failed zarrfs run said clearly that a
// feature is unsupported (and did not crash).
func isUnsupported(r result) bool {
	// A crash (a signal, exit 2 from a Go panic) is never "unsupported".
	return r.err != nil && isCleanExit1(r) && strings.Contains(strings.ToLower(string(r.stderr)), "unsupported")
}

// arrayNode is an array found by walking a store.
type arrayNode struct {
	Path   string // node path inside the store, "" for the root
	Format int    // 2 or 3
}

// dirFormat returns the Zarr format of the metadata in dir: 3 for a
// zarr.json, 2 for a .zarray or .zgroup, 0 for none.
func dirFormat(dir string) int {
	if _, err := os.Stat(filepath.Join(dir, "zarr.json")); err == nil {
		return 3
	}
	for _, name := range []string{".zarray", ".zgroup"} {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			return 2
		}
	}
	return 0
}

// isIsland reports whether dir, below a store root of format rootFormat, is
// the root of a hierarchy of the other format (as the example's v2/ folder
// inside its v3 hierarchy): a hierarchy of its own, not a child node.
func isIsland(rootFormat int, dir string) bool {
	f := dirFormat(dir)
	return rootFormat != 0 && f != 0 && f != rootFormat
}

// hierarchies returns root and the roots of the hierarchies of another
// format nested in it, recursively.
func hierarchies(t testing.TB, root string) []string {
	t.Helper()
	out := []string{root}
	rf := dirFormat(root)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || p == root {
			return err
		}
		if isIsland(rf, p) {
			out = append(out, hierarchies(t, p)...)
			return filepath.SkipDir
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
	return out
}

// findArrays walks the directory store root for arrays: directories holding
// a .zarray, or a zarr.json whose node_type is "array". Both documents in
// one directory count once, as v3. Hierarchies of another format nested
// in root (see isIsland) are not part of it.
func findArrays(t testing.TB, root string) []arrayNode {
	t.Helper()
	found := map[string]int{}
	rf := dirFormat(root)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && isIsland(rf, p) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		rel = filepath.ToSlash(rel)
		if rel == "." {
			rel = ""
		}
		switch d.Name() {
		case ".zarray":
			if found[rel] == 0 {
				found[rel] = 2
			}
		case "zarr.json":
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			if nodeType(b) == "array" {
				found[rel] = 3
			}
		}
		return nil
	})
	if err != nil {
		t.Fatalf("walking %s: %v", root, err)
	}
	return sortedNodes(found)
}

// findZipArrays lists the arrays in a zip store the same way. When the zip
// has no metadata at its root and holds a single folder (zipped from the
// parent directory), prefix is that folder's name.
func findZipArrays(t testing.TB, name string) (arrays []arrayNode, prefix string) {
	t.Helper()
	zr, err := zip.OpenReader(name)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	defer zr.Close()
	found := map[string]int{}
	tops := map[string]bool{}
	rootMeta := false
	for _, f := range zr.File {
		top, _, _ := strings.Cut(f.Name, "/")
		tops[top] = true
		switch f.Name {
		case "zarr.json", ".zgroup", ".zarray", ".zmetadata":
			rootMeta = true
		}
		dir, base := path.Split(f.Name)
		dir = strings.TrimSuffix(dir, "/")
		switch base {
		case ".zarray":
			if found[dir] == 0 {
				found[dir] = 2
			}
		case "zarr.json":
			rc, err := f.Open()
			if err != nil {
				t.Fatalf("%s: %s: %v", name, f.Name, err)
			}
			var buf bytes.Buffer
			_, err = buf.ReadFrom(rc)
			rc.Close()
			if err != nil {
				t.Fatalf("%s: %s: %v", name, f.Name, err)
			}
			if nodeType(buf.Bytes()) == "array" {
				found[dir] = 3
			}
		}
	}
	if !rootMeta && len(tops) == 1 {
		for top := range tops {
			prefix = top
		}
	}
	return sortedNodes(found), prefix
}

func nodeType(doc []byte) string {
	var m struct {
		NodeType string `json:"node_type"`
	}
	if json.Unmarshal(doc, &m) != nil {
		return ""
	}
	return m.NodeType
}

func sortedNodes(found map[string]int) []arrayNode {
	var out []arrayNode
	for p, f := range found {
		out = append(out, arrayNode{p, f})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// item names one array: its store and its node path there.
type item struct{ store, path string }

// itemsIn returns the items for paths in one store.
func itemsIn(store string, paths []string) []item {
	items := make([]item, len(paths))
	for i, p := range paths {
		items[i] = item{store, p}
	}
	return items
}

// zarritaRead reads arrays with zarrita (read.mjs) in one node process and
// returns, for each, its bytes or the error zarrita gave.
func zarritaRead(t testing.TB, items []item) (data [][]byte, errs []error) {
	t.Helper()
	peertest.NeedNode(t)
	list, out := writeList(t, items)
	peertest.Oracle(t, "js/read.mjs", "--list", list, out)
	return collect(t, "zarrita", out, len(items))
}

// pythonReadProgram reads v2 arrays with zarr-python: for the i-th line
// "STORE<TAB>PATH" of a list file it writes what zarrfs's data (or
// data.txt) must hold to OUT/<i>.bin, or the error to OUT/<i>.err. Missing
// chunks of an array without a fill value (null) read as zeros, as in
// zarrfs; zarr-python leaves that memory uninitialised.
const pythonReadProgram = `
import os, sys
import numpy as np, zarr
sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[1])))
from write_v2 import reference
listfile, out = sys.argv[2], sys.argv[3]
stores = {}
for i, line in enumerate(open(listfile, encoding="utf-8").read().split("\n")[:-1]):
    store, p = line.split("\t")
    try:
        if store not in stores:
            stores[store] = zarr.ZipStore(store, mode="r") if store.endswith(".zip") else zarr.DirectoryStore(store)
        z = zarr.open_array(store=stores[store], path=p, mode="r")
        if z.fill_value is None and z.dtype != object and z.shape != ():
            a = np.zeros(z.shape, dtype=z.dtype)
            z.get_basic_selection(Ellipsis, out=a)
        else:
            a = z[...]
        data = reference(np.asarray(a))
        with open(os.path.join(out, "%d.bin" % i), "wb") as f:
            f.write(data)
    except Exception as e:
        with open(os.path.join(out, "%d.err" % i), "w") as f:
            f.write("%s: %s" % (type(e).__name__, e))
`

// pythonRead reads v2 arrays with zarr-python, like zarritaRead.
func pythonRead(t testing.TB, items []item) (data [][]byte, errs []error) {
	t.Helper()
	list, out := writeList(t, items)
	script := pyScript("write_v2.py")
	peertest.RunPython(t, pythonReadProgram, script, list, out)
	return collect(t, "zarr-python", out, len(items))
}

// writeList writes the list file of items for a batch read and makes the
// directory for its results.
func writeList(t testing.TB, items []item) (list, out string) {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	for _, it := range items {
		fmt.Fprintf(&b, "%s\t%s\n", it.store, it.path)
	}
	list = filepath.Join(dir, "list.txt")
	if err := os.WriteFile(list, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	out = filepath.Join(dir, "out")
	if err := os.Mkdir(out, 0o755); err != nil {
		t.Fatal(err)
	}
	return list, out
}

// collect gathers the results of a batch read.
func collect(t testing.TB, peer, out string, n int) (data [][]byte, errs []error) {
	t.Helper()
	data = make([][]byte, n)
	errs = make([]error, n)
	for i := range n {
		b, err := os.ReadFile(filepath.Join(out, fmt.Sprintf("%d.bin", i)))
		if err == nil {
			data[i] = b
			continue
		}
		msg, err2 := os.ReadFile(filepath.Join(out, fmt.Sprintf("%d.err", i)))
		if err2 != nil {
			t.Fatalf("%s left neither data nor an error for item %d", peer, i)
		}
		errs[i] = fmt.Errorf("%s: %s", peer, firstLine(msg))
	}
	return data, errs
}

func firstLine(b []byte) string {
	s := strings.TrimSpace(string(b))
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// ---- mounts ----

// needFuse skips t when this machine cannot mount FUSE file systems.
func needFuse(t testing.TB) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skipf("FUSE unavailable: /dev/fuse is absent (%v); mount tests need it", err)
	}
	if _, err := exec.LookPath("fusermount3"); err != nil && os.Getuid() != 0 {
		t.Skip("FUSE unavailable: no fusermount3 and not root")
	}
}

// mounted is a running `zarrfs mount`.
type mounted struct {
	dir    string
	cmd    *exec.Cmd
	stderr *peertest.Buffer
	// exited is closed when the process has exited, with waitErr set.
	exited  chan struct{}
	waitErr error
}

// mountStore starts `zarrfs mount [flags] STORE MNT` in a subprocess and
// waits until MNT shows the store's root listing. The mount is undone in
// t.Cleanup whatever the test did.
func mountStore(t testing.TB, store string, flags ...string) *mounted {
	t.Helper()
	needFuse(t)
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	return startMount(t, mnt, append(append([]string{"mount"}, flags...), store, mnt)...)
}

// startMount runs zarrfs with args (a mount or demo command serving at mnt)
// and waits for mnt to show a listing.
func startMount(t testing.TB, mnt string, args ...string) *mounted {
	t.Helper()
	m := &mounted{dir: mnt, stderr: &peertest.Buffer{}, exited: make(chan struct{})}
	m.cmd = exec.Command(zarrfsBin, args...)
	m.cmd.Stderr = m.stderr
	m.cmd.Stdout = m.stderr
	if err := m.cmd.Start(); err != nil {
		t.Fatalf("zarrfs %s: %v", strings.Join(args, " "), err)
	}
	go func() {
		m.waitErr = m.cmd.Wait()
		close(m.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-m.exited:
		default:
			m.cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-m.exited:
			case <-time.After(10 * time.Second):
				m.cmd.Process.Kill()
				<-m.exited
			}
		}
		unmount(mnt)
	})
	deadline := time.Now().Add(20 * time.Second)
	for {
		select {
		case <-m.exited:
			t.Fatalf("zarrfs %s exited before mounting: %v\n%s", strings.Join(args, " "), m.waitErr, m.stderr.String())
		default:
		}
		if isMountpoint(mnt) {
			if entries, err := os.ReadDir(mnt); err == nil && len(entries) > 0 {
				return m
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("zarrfs %s: %s not mounted after 20 s\n%s", strings.Join(args, " "), mnt, m.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// isMountpoint reports whether dir is the root of a mount (a different
// device from its parent).
func isMountpoint(dir string) bool {
	var st, pst syscall.Stat_t
	if syscall.Stat(dir, &st) != nil || syscall.Stat(filepath.Dir(dir), &pst) != nil {
		return false
	}
	return st.Dev != pst.Dev
}

// unmount lazily unmounts dir if it is still mounted.
func unmount(dir string) {
	if !isMountpoint(dir) {
		return
	}
	if exec.Command("fusermount3", "-u", "-z", dir).Run() != nil {
		exec.Command("umount", "-l", dir).Run()
	}
}

// signalAndWait sends sig to the mount process and waits up to limit for it
// to exit, returning its exit error and how long it took.
func (m *mounted) signalAndWait(t testing.TB, sig syscall.Signal, limit time.Duration) (error, time.Duration) {
	t.Helper()
	start := time.Now()
	if err := m.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal: %v", err)
	}
	select {
	case <-m.exited:
		return m.waitErr, time.Since(start)
	case <-time.After(limit):
		m.cmd.Process.Kill()
		<-m.exited
		t.Errorf("zarrfs did not exit within %v of %v (killed: %v)\n%s", limit, sig, m.waitErr, m.stderr.String())
		return m.waitErr, time.Since(start)
	}
}

// run runs a tool in a subprocess with a time limit and returns its
// standard output, failing t on a non-zero exit.
func run(t testing.TB, name string, args ...string) []byte {
	t.Helper()
	out, stderr, err := runTool(name, args...)
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr)
	}
	return out
}

// runTool runs a tool with a one-minute limit.
func runTool(name string, args ...string) (stdout, stderr []byte, err error) {
	cmd := exec.Command(name, args...)
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		return nil, nil, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(time.Minute):
		cmd.Process.Kill()
		<-done
		err = fmt.Errorf("%s: timed out after a minute", name)
	}
	return o.Bytes(), e.Bytes(), err
}

// pyScript returns the path of the integration tests' Python oracle
// program name, in the one oracles folder (peertest.OraclesDir).
func pyScript(name string) string {
	return filepath.Join(peertest.OraclesDir(), "integration", name)
}
