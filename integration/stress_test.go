package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// stressArrays are the three arrays of the stress test, one per codec
// chain: uncompressed and Blosc+shuffle written by zarr-python (v2), and a
// sharded zstd+crc32c one (v3) written by write_sharded.mjs and read back by
// zarrita. Shapes leave edge chunks and edge shards.
type stressArray struct {
	Path   string `json:"path"`
	Ref    string `json:"ref"`
	Shape  []int  `json:"shape"`
	Chunks []int  `json:"chunks"`      // the chunks (inner chunks of a sharded array)
	Shards []int  `json:"shards"`      // the shards, or the chunks again
	Item   int    `json:"itemsize"`    // bytes per element
	Decode int64  `json:"decodedSize"` // the largest unit the engine decodes at once
}

// stressCacheSize is the decoded-chunk cache of the stress mount: small,
// so that the readers keep evicting and decoding.
const stressCacheSize = 8 << 20

// stressData is the stress arrays, written once per run (TestStress and
// TestFsx share them): raw and blosc in a v2 store, sharded in a v3 one,
// and, for TestFsx, two small v2 arrays whose sizes are no multiple of the
// page size (odd, tiny).
var stressData struct {
	once             sync.Once
	v2Store, v3Store string
	arrays           map[string]stressArray
	ok               bool
}

// stressFixture writes the stress arrays (once per run) and returns the
// stores and the arrays by path.
func stressFixture(t *testing.T) (v2Store, v3Store string, arrays map[string]stressArray) {
	t.Helper()
	peertest.NeedPython(t)
	peertest.NeedNode(t)
	stressData.once.Do(func() {
		base := filepath.Join(tmpRoot, "stress")
		specs := []pyArray{
			{Path: "raw", Shape: []int{1536, 1000}, Chunks: []int{100, 128}, DType: "<f4", Compressor: "none"},
			{Path: "blosc", Shape: []int{1200, 1300}, Chunks: []int{128, 96}, DType: "<i4", Compressor: "blosc-lz4-shuffle"},
			{Path: "odd", Shape: []int{999, 7}, Chunks: []int{100, 3}, DType: "<f8", Compressor: "zstd"},
			{Path: "tiny", Shape: []int{37}, Chunks: []int{10}, DType: "<i2", Compressor: "none"},
		}
		v2, refs := writePyArraysIn(t, base, specs)
		arrays := map[string]stressArray{}
		for _, s := range specs {
			item := 4
			switch s.DType {
			case "<f8":
				item = 8
			case "<i2":
				item = 2
			}
			decode := int64(item)
			for _, c := range s.Chunks {
				decode *= int64(c)
			}
			shape := s.Shape
			chunks := s.Chunks
			if len(shape) == 1 { // the stress program's edges want two dimensions
				shape, chunks = []int{1, shape[0]}, []int{1, chunks[0]}
			}
			arrays[s.Path] = stressArray{Path: s.Path, Ref: refs[s.Path], Shape: shape, Chunks: chunks, Shards: chunks, Item: item, Decode: decode}
		}
		v3 := filepath.Join(base, "sharded.zarr")
		peertest.Oracle(t, "js/write_sharded.mjs", v3, "sharded", "1000", "1100", "200", "200", "50", "40")
		ref := filepath.Join(base, "sharded.bin")
		if err := os.WriteFile(ref, peertest.Oracle(t, "js/read.mjs", v3, "sharded"), 0o644); err != nil {
			t.Fatal(err)
		}
		arrays["sharded"] = stressArray{Path: "sharded", Ref: ref, Shape: []int{1000, 1100}, Chunks: []int{50, 40}, Shards: []int{200, 200}, Item: 4, Decode: 200 * 200 * 4}
		stressData.v2Store, stressData.v3Store, stressData.arrays, stressData.ok = v2, v3, arrays, true
	})
	if !stressData.ok {
		t.Fatal("writing the stress arrays failed in an earlier test")
	}
	return stressData.v2Store, stressData.v3Store, stressData.arrays
}

// stressProgram runs the readers: argv = DURATION_S SEED then JSON cases
// {"mnt", "path", "ref", "shape", "chunks", "shards", "itemsize"}. Reader
// i reads case i % len(cases); the first half read sequentially (64 KiB –
// 1 MiB reads, dropping the file's page cache at each pass, half of them
// with O_DIRECT), the other half do unaligned random preads that start
// near chunk and shard edges (a third of them with O_DIRECT, the rest
// dropping the page cache every 64 reads). Every byte is compared with the
// reference. It prints one JSON summary.
const stressProgram = `
import json, os, random, sys, threading, time
duration, seed, cases = float(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
NREADERS = 32
refs = {c["path"]: open(c["ref"], "rb").read() for c in cases}
deadline = time.monotonic() + duration
lock = threading.Lock()
stats = {"reads": 0, "bytes": 0, "mismatches": 0, "errors": 0, "short": 0, "details": []}

def note(kind, msg):
    with lock:
        stats[kind] += 1
        if len(stats["details"]) < 10:
            stats["details"].append(msg)

def edges(c, rng):
    # A byte offset near a chunk or shard edge: a random row, a column at
    # an edge, then a few bytes either side.
    rows, cols = c["shape"]
    edge = rng.choice([c["chunks"], c["shards"]])
    if rng.random() < 0.3:
        i = rng.randrange(0, (rows + edge[0] - 1) // edge[0]) * edge[0]  # a row edge
        j = rng.randrange(0, cols)
    else:
        i = rng.randrange(0, rows)
        j = rng.randrange(0, (cols + edge[1] - 1) // edge[1]) * edge[1]
    off = (i * cols + j) * c["itemsize"] + rng.randrange(-37, 38)
    return max(0, min(off, len(refs[c["path"]]) + 16))

def reader(k):
    rng = random.Random(seed * 1000 + k)
    c = cases[k % len(cases)]
    ref = refs[c["path"]]
    path = os.path.join(c["mnt"], c["path"], "data")
    sequential = k < NREADERS // 2
    direct = (k % 2 == 1) if sequential else (k % 3 == 0)
    fd = os.open(path, os.O_RDONLY | (os.O_DIRECT if direct else 0))
    off, n = 0, 0
    try:
        while time.monotonic() < deadline:
            if sequential:
                size = rng.randrange(64 << 10, (1 << 20) + 1)
                if off >= len(ref):
                    off = 0
                    if not direct:
                        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
            else:
                off = edges(c, rng)
                size = rng.choice([1, 3, 4, 17, 1000, 4093, 4096, 65536 + 7, 300000, rng.randrange(1, 1 << 20)])
            try:
                got = os.pread(fd, size, off)
            except OSError as e:
                note("errors", "%s pread(%d, %d): %s" % (c["path"], size, off, e))
                time.sleep(0.01)
                continue
            want = ref[off:off + size]
            if got != want:
                if len(got) < len(want) and got == want[:len(got)]:
                    note("short", "%s pread(%d, %d) gave %d bytes" % (c["path"], size, off, len(got)))
                else:
                    first = next((i for i in range(min(len(got), len(want))) if got[i] != want[i]), min(len(got), len(want)))
                    note("mismatches", "%s pread(%d, %d): %d bytes, want %d, first difference at %d" % (c["path"], size, off, len(got), len(want), off + first))
            with lock:
                stats["reads"] += 1
                stats["bytes"] += len(got)
            if sequential:
                off += len(got) if got else size
            else:
                n += 1
                if not direct and n % 64 == 0:
                    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)

threads = [threading.Thread(target=reader, args=(k,)) for k in range(NREADERS)]
start = time.monotonic()
for t in threads:
    t.start()
for t in threads:
    t.join()
stats["seconds"] = time.monotonic() - start
print(json.dumps(stats))
`

// stressDuration is ZARRFS_STRESS_DURATION (a Go duration), 10 s by default.
func stressDuration(t *testing.T) time.Duration {
	s := os.Getenv("ZARRFS_STRESS_DURATION")
	if s == "" {
		return 10 * time.Second
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		t.Fatalf("ZARRFS_STRESS_DURATION=%q: %v", s, err)
	}
	return d
}

// TestStress: 32 readers (one python3 process, 32 threads) over three
// arrays with different codec chains, half sequential and half random
// unaligned preads across chunk and shard edges, for
// ZARRFS_STRESS_DURATION (10 s; 60 s in make stress), on two zarrfs mount
// processes with a small cache. Every byte is checked against the peers'
// reference; none may differ, no read may fail, and each daemon's peak
// RSS must stay within cache size + 2 × cores × largest decoded chunk +
// 64 MiB.
func TestStress(t *testing.T) {
	needFuse(t)
	duration := stressDuration(t)
	v2Store, v3Store, arrays := stressFixture(t)
	cacheFlag := fmt.Sprintf("--cache-size=%d", stressCacheSize)
	m2 := mountChecked(t, v2Store, cacheFlag)
	m3 := mountChecked(t, v3Store, cacheFlag)
	type caseJSON struct {
		stressArray
		Mnt string `json:"mnt"`
	}
	// Reader k reads cases[k%3].
	cases := []caseJSON{{arrays["raw"], m2.dir}, {arrays["blosc"], m2.dir}, {arrays["sharded"], m3.dir}}
	spec, _ := json.Marshal(cases)
	out := peertest.RunPython(t, stressProgram, fmt.Sprint(duration.Seconds()), "20260923", string(spec))
	var st struct {
		Reads, Bytes, Mismatches, Errors, Short int64
		Details                                 []string
		Seconds                                 float64
	}
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("the stress program printed %q: %v", out, err)
	}
	mib := float64(st.Bytes) / (1 << 20)
	t.Logf("32 readers, %.1f s: %d reads, %.0f MiB (%.0f MiB/s, %.0f reads/s), %d mismatches, %d errors, %d short reads",
		st.Seconds, st.Reads, mib, mib/st.Seconds, float64(st.Reads)/st.Seconds, st.Mismatches, st.Errors, st.Short)
	if st.Mismatches != 0 || st.Errors != 0 || st.Short != 0 {
		t.Errorf("%d mismatches, %d errors, %d short reads:\n%s", st.Mismatches, st.Errors, st.Short, strings.Join(st.Details, "\n"))
	}
	minReads := int64(1000)
	if peertest.RaceBuild {
		minReads = 100 // the race detector slows zarrfs about 15 times
	}
	if st.Reads < minReads {
		t.Errorf("only %d reads in %.1f s", st.Reads, st.Seconds)
	}
	for _, m := range []struct {
		name    string
		m       *mounted
		largest int64
	}{{"v2 mount", m2, arrays["raw"].Decode}, {"sharded mount", m3, arrays["sharded"].Decode}} {
		hwm, err := procStatus(m.m.cmd.Process.Pid, "VmHWM")
		if err != nil {
			t.Fatal(err)
		}
		limit := int64(stressCacheSize) + 2*int64(runtime.NumCPU())*m.largest + 64<<20
		t.Logf("%s: peak RSS (VmHWM) %.1f MiB; limit cache %d MiB + 2 × %d cores × %d KiB + 64 MiB = %.1f MiB",
			m.name, float64(hwm)/1024, stressCacheSize>>20, runtime.NumCPU(), m.largest>>10, float64(limit)/(1<<20))
		if peertest.RaceBuild {
			continue // the race detector multiplies memory use
		}
		if hwm*1024 > limit {
			t.Errorf("%s: peak RSS %d KiB exceeds %d KiB", m.name, hwm, limit>>10)
		}
	}
	stopClean(t, m2)
	stopClean(t, m3)
}
