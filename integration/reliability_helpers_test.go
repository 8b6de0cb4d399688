package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	zfs "github.com/zarrfs/zarrfs/fs"
	"github.com/zarrfs/zarrfs/internal/peertest"
	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/zarr"
)

// pyArraysProgram writes v2 arrays with zarr-python into a directory store:
// argv[2] is a JSON list of {"path", "shape", "chunks", "dtype",
// "compressor": "none" | "blosc-lz4-shuffle" | "zstd"}; each array's
// reference bytes (C order, little-endian) go to REFDIR/<path with / as
// _>.bin. Elements are a pseudo-random function of their index, so that
// no two chunks are alike.
const pyArraysProgram = `
import json, os, sys
import numpy as np, numcodecs, zarr
root, specs, refdir = sys.argv[1], json.loads(sys.argv[2]), sys.argv[3]
comp = {"none": None, "zstd": numcodecs.Zstd(level=1),
        "blosc-lz4-shuffle": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE)}
store = zarr.DirectoryStore(root)
zarr.group(store=store)
os.makedirs(refdir, exist_ok=True)
for s in specs:
    n = int(np.prod(s["shape"]))
    i = np.arange(n, dtype=np.uint64)
    v = ((i * np.uint64(2654435761)) ^ (i >> np.uint64(7))) % np.uint64(1 << 20)
    a = (v.astype(np.float64) * 0.37 - 1000).astype(s["dtype"]).reshape(s["shape"])
    z = zarr.open_array(store=store, path=s["path"], mode="w", shape=s["shape"], chunks=s["chunks"],
                        dtype=s["dtype"], compressor=comp[s["compressor"]], fill_value=0)
    z[...] = a
    back = z[...]
    assert (back == a).all()
    with open(os.path.join(refdir, s["path"].replace("/", "_") + ".bin"), "wb") as f:
        f.write(np.ascontiguousarray(back).astype(back.dtype.newbyteorder("<")).tobytes())
`

// pyArray describes an array pyArraysProgram writes.
type pyArray struct {
	Path       string `json:"path"`
	Shape      []int  `json:"shape"`
	Chunks     []int  `json:"chunks"`
	DType      string `json:"dtype"`
	Compressor string `json:"compressor"`
}

// writePyArrays has zarr-python write arrays into a new directory store
// and returns the store and each array's reference file.
func writePyArrays(t testing.TB, arrays []pyArray) (storeDir string, refs map[string]string) {
	t.Helper()
	return writePyArraysIn(t, t.TempDir(), arrays)
}

// writePyArraysIn is writePyArrays into the directory base.
func writePyArraysIn(t testing.TB, base string, arrays []pyArray) (storeDir string, refs map[string]string) {
	t.Helper()
	peertest.NeedPython(t)
	storeDir = filepath.Join(base, "store.zarr")
	refDir := filepath.Join(base, "refs")
	spec, _ := json.Marshal(arrays)
	peertest.RunPython(t, pyArraysProgram, storeDir, string(spec), refDir)
	refs = map[string]string{}
	for _, a := range arrays {
		refs[a.Path] = filepath.Join(refDir, strings.ReplaceAll(a.Path, "/", "_")+".bin")
	}
	return storeDir, refs
}

// inProcessMount mounts the hierarchy in st in the test process (so that a
// test can change a fault-injecting store underneath) and unmounts it at
// cleanup. Only subprocesses read the mount.
func inProcessMount(t testing.TB, st store.Store, cfg zfs.Config) (string, *zfs.Server, *zarr.Hierarchy) {
	t.Helper()
	needFuse(t)
	if os.Geteuid() != 0 {
		t.Skip("in-process mounts need root (DirectMount)")
	}
	h, err := zarr.Open(context.Background(), st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mnt := filepath.Join(t.TempDir(), "mnt")
	if err := os.Mkdir(mnt, 0o755); err != nil {
		t.Fatal(err)
	}
	if cfg.Logger == nil {
		cfg.Logger = log.New(io.Discard, "", 0)
	}
	if cfg.FsName == "" {
		cfg.FsName = st.String()
	}
	srv, err := zfs.Mount(mnt, h, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			zfs.Unmount(mnt, true)
		}
		done := make(chan struct{})
		go func() { srv.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			t.Errorf("the in-process mount at %s did not stop", mnt)
		}
	})
	return mnt, srv, h
}

// openDir opens a directory store read-only, closed at cleanup.
func openDir(t testing.TB, path string) *dir.Store {
	t.Helper()
	s, err := dir.Open(path, dir.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// timed runs a tool and returns how long it took with its output and error.
func timed(name string, args ...string) (time.Duration, []byte, []byte, error) {
	start := time.Now()
	out, stderr, err := runTool(name, args...)
	return time.Since(start), out, stderr, err
}

// procStatus returns a field of /proc/PID/status in kB (VmRSS, VmHWM …).
func procStatus(pid int, field string) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			f := strings.Fields(v)
			if len(f) == 0 {
				break
			}
			return strconv.ParseInt(f[0], 10, 64)
		}
	}
	return 0, fmt.Errorf("/proc/%d/status has no %s", pid, field)
}

// openFDs counts the open file descriptors of process pid.
func openFDs(pid int) (int, error) {
	entries, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", pid))
	return len(entries), err
}

// stopClean sends SIGTERM to a zarrfs mount and checks that it exits 0
// within 5 s (a -race build exits 66 after reporting a data race).
func stopClean(t *testing.T, m *mounted) {
	t.Helper()
	err, _ := m.signalAndWait(t, syscall.SIGTERM, 5*time.Second)
	if err != nil {
		t.Errorf("zarrfs mount exited with %v after SIGTERM", err)
	}
}

// mountChecked is mountStore for the reliability tests: once the test
// has ended and the mount is stopped, the test fails if the daemon
// reported a data race. Under -race the binary is built with -race too
// (see peertest.RaceBuild), and `make test` runs these tests so; the
// check comes after the daemon exits, so that it also sees races in its
// shutdown, and whether the test signalled, killed or left the daemon.
func mountChecked(t *testing.T, store string, flags ...string) *mounted {
	t.Helper()
	var m *mounted
	// Registered before mountStore's own cleanup, so run after it.
	t.Cleanup(func() { checkNoRace(t, m) })
	m = mountStore(t, store, flags...)
	return m
}

// checkNoRace fails the test if the race detector reported a data race in
// the zarrfs process m (nil: nothing was mounted).
func checkNoRace(t *testing.T, m *mounted) {
	t.Helper()
	if m == nil {
		return
	}
	if out := m.stderr.String(); strings.Contains(out, "DATA RACE") {
		t.Errorf("the race detector reported a data race in zarrfs:\n%s", out)
	}
}

// slack stretches a time limit of the reliability tests when they run
// under -race (the binary too): the race detector slows everything several
// times over, and the limits are about zarrfs, not the detector. The
// figures in docs/TESTING.md come from runs without -race.
func slack(d time.Duration) time.Duration {
	if peertest.RaceBuild {
		return 4 * d
	}
	return d
}
