package integration

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// fsxProgram is an fsx-style checker: from a seed it draws a sequence of
// operations on the data files of mounted arrays (argv: SEED OPS then JSON
// files [{"path", "ref"}]) and checks each against the reference bytes:
//
//	pread      os.pread at any offset (up to a page past EOF) and length
//	mmap       a read through a whole-file mapping kept open between
//	           operations (remapped now and then), including, on the
//	           last page, the bytes past EOF, which must be zero
//	mmapoff    a read through a fresh mapping at a page-aligned offset
//	fstat      st_size must be the reference's length
//	seekend    lseek(SEEK_END) must return it, and a read there gives b""
//	read       lseek(SEEK_SET) then read (the file offset path)
//	drop       posix_fadvise(DONTNEED): later reads go to zarrfs again
//	reopen     close and open the file again
//
// The same seed replays the same sequence. It prints a JSON summary with
// the first failures, each naming its operation number.
const fsxProgram = `
import ctypes, json, mmap, os, random, sys, time
seed, nops, files = int(sys.argv[1]), int(sys.argv[2]), json.loads(sys.argv[3])
PAGE = mmap.PAGESIZE
rng = random.Random(seed)
refs = [open(f["ref"], "rb").read() for f in files]
fds = [os.open(f["path"], os.O_RDONLY) for f in files]
maps = [None] * len(files)
counts, times, failures = {}, {}, []

def fail(i, op, msg):
    if len(failures) < 10:
        failures.append("op %d %s: %s" % (i, op, msg))

def length():
    r = rng.random()
    if r < 0.3:
        return rng.randrange(1, 17)
    if r < 0.7:
        return rng.randrange(1, 4 * PAGE)
    return rng.randrange(1, 1 << 18)

def offset(size):
    r = rng.random()
    if r < 0.1:
        return max(0, size - rng.randrange(0, 2 * PAGE))  # near EOF
    if r < 0.15:
        return size + rng.randrange(0, PAGE)  # past EOF
    return rng.randrange(0, max(size, 1))

def tail_zero(fd, size):
    # The bytes between EOF and the end of the last mapped page, through a
    # private mapping of the last page (ctypes needs a writable buffer to
    # find its address; nothing is written).
    pad = (-size) % PAGE
    if pad == 0:
        return True
    start = (size - 1) // PAGE * PAGE
    m = mmap.mmap(fd, size - start, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_WRITE, offset=start)
    c = ctypes.c_char.from_buffer(m)
    try:
        return ctypes.string_at(ctypes.addressof(c) + size - start, pad) == bytes(pad)
    finally:
        del c
        m.close()

ops = ["pread"] * 60 + ["mmap"] * 50 + ["mmapoff"] * 10 + ["fstat"] * 20 + ["seekend"] * 20 + ["read"] * 20 + ["drop"] * 1 + ["reopen"] * 2
for i in range(nops):
    k = rng.randrange(len(files))
    ref, fd, size = refs[k], fds[k], len(refs[k])
    op = rng.choice(ops)
    counts[op] = counts.get(op, 0) + 1
    t0 = time.monotonic()
    try:
        if op == "pread":
            off, n = offset(size), length()
            got = os.pread(fd, n, off)
            if got != ref[off:off + n]:
                fail(i, op, "%s pread(%d, %d): %d bytes differ from the reference's %d" % (files[k]["path"], n, off, len(got), len(ref[off:off + n])))
        elif op == "mmap":
            if maps[k] is None or rng.random() < 0.01:
                if maps[k] is not None:
                    maps[k].close()
                maps[k] = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
            m = maps[k]
            if len(m) != size:
                fail(i, op, "%s: mapping of %d bytes, want %d" % (files[k]["path"], len(m), size))
                continue
            off = rng.randrange(0, size)
            n = length()
            if m[off:off + n] != ref[off:off + n]:
                fail(i, op, "%s mmap[%d:%d] differs" % (files[k]["path"], off, off + n))
            if rng.random() < 0.05 and not tail_zero(fd, size):
                fail(i, op, "%s: bytes past EOF in the last mapped page are not zero" % files[k]["path"])
        elif op == "mmapoff":
            pages = (size + PAGE - 1) // PAGE
            start = rng.randrange(0, pages) * PAGE
            n = min(rng.randrange(1, 64) * PAGE, size - start)
            m = mmap.mmap(fd, n, prot=mmap.PROT_READ, offset=start)
            try:
                j = rng.randrange(0, n)
                w = length()
                if m[j:j + w] != ref[start + j:start + min(j + w, n)]:
                    fail(i, op, "%s mmap(offset=%d, %d)[%d:%d] differs" % (files[k]["path"], start, n, j, j + w))
            finally:
                m.close()
        elif op == "fstat":
            st = os.fstat(fd)
            if st.st_size != size:
                fail(i, op, "%s st_size %d, want %d" % (files[k]["path"], st.st_size, size))
        elif op == "seekend":
            end = os.lseek(fd, 0, os.SEEK_END)
            if end != size:
                fail(i, op, "%s lseek(SEEK_END) = %d, want %d" % (files[k]["path"], end, size))
            if os.read(fd, 100) != b"":
                fail(i, op, "%s: read at EOF gave bytes" % files[k]["path"])
        elif op == "read":
            off, n = offset(size), length()
            os.lseek(fd, off, os.SEEK_SET)
            got = os.read(fd, n)
            # A read(2) may return fewer bytes than asked; never wrong ones.
            if got != ref[off:off + len(got)] or (len(got) == 0 and off < size):
                fail(i, op, "%s read(%d) at %d: %d bytes differ" % (files[k]["path"], n, off, len(got)))
        elif op == "drop":
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        elif op == "reopen":
            if maps[k] is not None:
                maps[k].close()
                maps[k] = None
            os.close(fd)
            fds[k] = os.open(files[k]["path"], os.O_RDONLY)
    except (OSError, ValueError) as e:
        fail(i, op, "%s: %s" % (files[k]["path"], e))
    times[op] = times.get(op, 0) + time.monotonic() - t0
for m in maps:
    if m is not None:
        m.close()
print(json.dumps({"ops": nops, "counts": counts, "seconds": {k: round(v, 2) for k, v in times.items()}, "failures": failures}))
`

// TestFsx runs fsxProgram on the data files of five arrays (uncompressed,
// Blosc, zstd and sharded; sizes that are and are not page multiples) on
// zarrfs mounts: ZARRFS_FSX_OPS operations (100,000 by default) from
// ZARRFS_FSX_SEED (by default the time; the seed is logged, and the same
// seed replays the same sequence).
func TestFsx(t *testing.T) {
	needFuse(t)
	ops := 100000
	if peertest.RaceBuild {
		ops = 20000 // 100,000 take 4 minutes against a -race build
	}
	if s := os.Getenv("ZARRFS_FSX_OPS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil {
			t.Fatalf("ZARRFS_FSX_OPS=%q: %v", s, err)
		}
		ops = n
	}
	seed := time.Now().UnixNano() % 1e9
	if s := os.Getenv("ZARRFS_FSX_SEED"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			t.Fatalf("ZARRFS_FSX_SEED=%q: %v", s, err)
		}
		seed = n
	}
	v2Store, v3Store, arrays := stressFixture(t)
	m2 := mountChecked(t, v2Store, "--cache-size=32MiB")
	m3 := mountChecked(t, v3Store, "--cache-size=32MiB")
	type file struct {
		Path string `json:"path"`
		Ref  string `json:"ref"`
	}
	var files []file
	for _, name := range []string{"raw", "blosc", "odd", "tiny"} {
		files = append(files, file{filepath.Join(m2.dir, name, "data"), arrays[name].Ref})
	}
	files = append(files, file{filepath.Join(m3.dir, "sharded", "data"), arrays["sharded"].Ref})
	spec, _ := json.Marshal(files)
	start := time.Now()
	out := peertest.RunPython(t, fsxProgram, fmt.Sprint(seed), fmt.Sprint(ops), string(spec))
	var res struct {
		Ops      int
		Counts   map[string]int
		Seconds  map[string]float64
		Failures []string
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("fsx printed %q: %v", out, err)
	}
	t.Logf("fsx seed %d: %d operations in %v; count per operation %v; seconds per operation %v",
		seed, res.Ops, time.Since(start).Round(time.Millisecond), res.Counts, res.Seconds)
	if len(res.Failures) > 0 {
		t.Errorf("fsx seed %d: failures (replay with ZARRFS_FSX_SEED=%d go test -run Fsx ./integration/):\n%s",
			seed, seed, strings.Join(res.Failures, "\n"))
	}
	stopClean(t, m2)
	stopClean(t, m3)
}
