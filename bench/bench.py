"""The zarrfs benchmark driver: `make bench` runs it with /usr/bin/python3 (see BENCH.md).

It generates the data once (reused from BENCH_DIR when present), then measures in one run,
in alternating rounds, and prints a Markdown table of medians and ratios:

  per store (v2 Blosc lz4+shuffle, zstd, gzip, uncompressed by zarr-python; v3 zstd and v3
  sharded written by zarrfs): zarr-python z[:]; np.fromfile(MOUNT/arr/data) on a freshly
  mounted file system (the first read after mounting); zarrfs cat > /dev/null; and the
  page-cache ceiling (np.fromfile and cat of the raw bytes in one page-cached file);
  scaling: first-read throughput for arrays of BENCH_SCALE_MIB sizes and the daemon's
  peak RSS during the largest; find and ls -lR over a hierarchy of BENCH_TREE arrays, and
  find and ls -lR over the same tree served by bench/findfloor (a FUSE server doing nothing else);
  random 4 KiB preads: median and p99 latency, cold and with the chunks cached;
  serve: a sequential read of the 256 MiB array of scale-256 on a fresh server each time, through
  the FUSE mount (cat), zarrfs serve webdav (curl) and zarrfs serve nfs (libnfs's nfs-cat; the
  kernel's NFS client where it has one), all on loopback, alternating.

Environment (defaults in brackets):
  BENCH_DIR [/tmp/zarrfs-bench]  data cache   BENCH_MIB [512]         main array size
  BENCH_ROUNDS [5]                            BENCH_SCALE_MIB [16,256,2048]
  BENCH_TREE [10000]                          BENCH_MOUNT_ARGS []     extra `zarrfs mount` flags
  BENCH_ONLY [main,scale,tree,pread,serve] (gen: only generate)
  BENCH_PROFILE []  when set, every mount writes a CPU profile to BENCH_DIR/profile-STORE.prof
  ZARRFS [bin/zarrfs]  BENCHDATA [bin/benchdata]  FINDFLOOR [bin/findfloor]

Every store file is read once before each round, so every reader (zarr-python, the mount,
zarrfs cat) reads its store from the page cache: the comparison is of decoding, not disks.
`python3 bench.py read ...` is the reader subprocess the driver times.
"""

import json
import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = "/usr/bin/python3"


def env(name, default):
    return os.environ.get(name, default)


BENCH_DIR = env("BENCH_DIR", "/tmp/zarrfs-bench")
MIB = int(env("BENCH_MIB", "512"))
ROUNDS = int(env("BENCH_ROUNDS", "5"))
SCALE = [int(s) for s in env("BENCH_SCALE_MIB", "16,256,2048").split(",") if s]
TREE = int(env("BENCH_TREE", "10000"))
MOUNT_ARGS = env("BENCH_MOUNT_ARGS", "").split()
ONLY = env("BENCH_ONLY", "main,scale,tree,pread,serve").split(",")
PROFILE = env("BENCH_PROFILE", "") != ""
ZARRFS = os.path.abspath(env("ZARRFS", os.path.join(ROOT, "bin", "zarrfs")))
BENCHDATA = os.path.abspath(env("BENCHDATA", os.path.join(ROOT, "bin", "benchdata")))
FINDFLOOR = os.path.abspath(env("FINDFLOOR", os.path.join(ROOT, "bin", "findfloor")))
SERVE_MIB = 256  # the array bench_serve reads
CHUNK_BYTES = 512 * 1024 * 4  # the arrays' chunks (bench/gen.py, bench/benchdata)
SHARD_BYTES = 4 * CHUNK_BYTES

CORES = len(os.sched_getaffinity(0))  # the CPUs this benchmark, the mount and zarr-python may use

V2 = ["v2-blosc-lz4", "v2-zstd", "v2-gzip", "v2-raw"]
V3 = ["v3-zstd", "v3-sharded"]


# ---------------------------------------------------------------- reader subprocess

def reader(args):
    """python3 bench.py read MODE PATH [crc]: time one read, print JSON."""
    import numpy as np
    mode, path = args[0], args[1]
    out = {}
    if mode == "zarr":
        import zarr
        z = zarr.open_group(path, mode="r")["arr"]
        t, c = time.perf_counter(), time.process_time()
        a = z[:]
        out["s"], out["cpu"] = time.perf_counter() - t, time.process_time() - c
    elif mode == "zarr-http":
        # zarr-python over fsspec's HTTP file system (aiohttp): z[:] requests every chunk at once.
        import zarr
        t, c = time.perf_counter(), time.process_time()
        z = zarr.open_consolidated(path, mode="r")["arr"]
        a = z[:]
        out["s"], out["cpu"] = time.perf_counter() - t, time.process_time() - c
    elif mode == "zarr-walk":
        # zarr-python opens a consolidated hierarchy over HTTP and visits every array.
        import zarr
        t = time.perf_counter()
        g = zarr.open_consolidated(path, mode="r")
        n = []
        g.visititems(lambda name, obj: n.append(obj.shape) if isinstance(obj, zarr.Array) else None)
        out["s"], out["arrays"] = time.perf_counter() - t, len(n)
        a = None
    elif mode == "fromfile":
        t, c = time.perf_counter(), time.process_time()
        a = np.fromfile(path, dtype="<f4")
        out["s"], out["cpu"] = time.perf_counter() - t, time.process_time() - c
    elif mode == "pread":
        out = preads(path, int(args[2]), int(args[3]))
        a = None
    elif mode == "xattr":
        out = {"times": getxattrs(path, int(args[2]))}
        a = None
    if a is not None and len(args) > 2 and args[2] == "crc":
        out["crc"] = zlib.crc32(memoryview(np.ascontiguousarray(a)).cast("B"))
        out["n"] = a.nbytes
    print(json.dumps(out))


def preads(path, chunk, nwarm):
    """4 KiB preads: one at a random page of every chunk in random order (cold: the
    chunk is not decoded yet), then nwarm at other random pages (the chunks cached)."""
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
    size = os.fstat(fd).st_size
    pages = chunk // 4096
    rng = random.Random(7)
    used = set()
    cold, warm = [], []
    order = list(range(size // chunk))
    rng.shuffle(order)
    for c in order:
        off = (c * pages + rng.randrange(pages)) * 4096
        used.add(off)
        t = time.perf_counter()
        os.pread(fd, 4096, off)
        cold.append(time.perf_counter() - t)
    while len(warm) < nwarm:
        off = rng.randrange(size // 4096) * 4096
        if off in used:
            continue
        used.add(off)
        t = time.perf_counter()
        os.pread(fd, 4096, off)
        warm.append(time.perf_counter() - t)
    os.close(fd)
    return {"cold": cold, "warm": warm}


def getxattrs(path, n):
    """n getxattr calls of a missing attribute of path: each is one FUSE round trip with
    next to nothing to do in the daemon (the kernel caches no answer); their times in s."""
    times = []
    for _ in range(n):
        t = time.perf_counter()
        try:
            os.getxattr(path, "user.zarr.none")
        except OSError:
            pass
        times.append(time.perf_counter() - t)
    return times


def read(*args):
    p = subprocess.run([PY, os.path.abspath(__file__), "read", *args], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("reader %s: %s" % (args, p.stderr.strip()[-2000:]))
    return json.loads(p.stdout)


# ---------------------------------------------------------------- helpers

def log(*a):
    print(*a, file=sys.stderr, flush=True)


def run(*cmd, **kw):
    subprocess.run(list(cmd), check=True, **kw)


def timed(*cmd):
    return timed_cpu(*cmd)[0]


def timed_cpu(*cmd, env=None):
    """Run cmd (in env, os.environ by default) with its output to /dev/null: wall seconds and
    CPU seconds (user + system)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(list(cmd), check=True, stdout=subprocess.DEVNULL, env=env)
    t = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return t, r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime


def proc_cpu(pid):
    """CPU seconds (user + system) process pid has used."""
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def warm(path):
    """Read every file under path (or path) so that it is in the page cache."""
    files = [path] if os.path.isfile(path) else [os.path.join(d, f) for d, _, fs in os.walk(path) for f in fs]
    for f in files:
        with open(f, "rb") as fh:
            while fh.read(1 << 24):
                pass


def du(path):
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)


class Mount:
    """A fresh `zarrfs mount` of a store (by binary, ZARRFS by default, with env for the daemon's
    environment, os.environ by default); peak() is the daemon's peak RSS in bytes. server, when
    given, is another FUSE server's command, run with the mount point added last instead."""

    def __init__(self, store, extra=(), binary=None, env=None, server=None):
        self.zarrfs = binary or ZARRFS
        self.mnt = tempfile.mkdtemp(prefix="zarrfs-bench-mnt-")
        os.makedirs(BENCH_DIR, exist_ok=True)
        self.logf = open(os.path.join(BENCH_DIR, "mount.log"), "a")
        menv = dict(os.environ if env is None else env)
        if PROFILE and server is None:
            menv["ZARRFS_CPUPROFILE"] = os.path.join(BENCH_DIR, "profile-%s.prof" % os.path.basename(store))
        cmd = [*server, self.mnt] if server else [self.zarrfs, "mount", *MOUNT_ARGS, *extra, store, self.mnt]
        self.p = subprocess.Popen(cmd, stdout=self.logf, stderr=self.logf, env=menv)
        deadline = time.time() + 60
        while not os.path.ismount(self.mnt):
            if self.p.poll() is not None or time.time() > deadline:
                self.close()
                raise RuntimeError("%s failed to mount (see %s/mount.log)" % (" ".join(cmd), BENCH_DIR))
            time.sleep(0.02)

    def peak(self):
        with open("/proc/%d/status" % self.p.pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) * 1024
        return 0

    def close(self):
        if os.path.ismount(self.mnt):
            subprocess.run([self.zarrfs, "unmount", self.mnt], stderr=self.logf)
        try:
            self.p.wait(60)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.logf.close()
        os.rmdir(self.mnt)

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


def mount_read(store, crc=False):
    """Read MOUNT/arr/data once on a fresh mount: s, cpu (the reader's and the daemon's), peak RSS."""
    with Mount(store) as m:
        c0 = proc_cpu(m.p.pid)
        r = read("fromfile", os.path.join(m.mnt, "arr", "data"), *(["crc"] if crc else []))
        r["cpu"] += proc_cpu(m.p.pid) - c0
        r["peak"] = m.peak()
        return r


def mibs(nbytes, s):
    return nbytes / (1 << 20) / s


def fmt(x):
    return "%.0f" % x if x >= 100 else "%.1f" % x


# ---------------------------------------------------------------- data

def want(*parts):
    return "gen" in ONLY or any(p in ONLY for p in parts)


def generate():
    os.makedirs(BENCH_DIR, exist_ok=True)
    main = os.path.join(BENCH_DIR, "main-%d" % MIB)
    if not os.path.exists(os.path.join(main, "done")) and want("main", "pread"):
        log("generating %s (zarr-python v2 stores, then v3 copies by zarrfs)" % main)
        subprocess.run(["rm", "-rf", main], check=True)
        os.makedirs(main)
        run(PY, os.path.join(HERE, "gen.py"), main, str(MIB))
        for kind in ("zstd", "sharded"):
            run(BENCHDATA, "convert", os.path.join(main, "v2-raw"), os.path.join(main, "v3-" + kind), kind)
        open(os.path.join(main, "done"), "w").close()
    if want("scale", "serve"):
        for s in sorted(set((SCALE if want("scale") else []) + ([SERVE_MIB] if want("serve") else []))):
            d = os.path.join(BENCH_DIR, "scale-%d" % s)
            if not os.path.exists(os.path.join(d, "arr", "zarr.json")) or not os.path.exists(d + ".done"):
                log("generating %s" % d)
                subprocess.run(["rm", "-rf", d], check=True)
                run(BENCHDATA, "synth", d, str(s))
                open(d + ".done", "w").close()
    if want("tree"):
        d = os.path.join(BENCH_DIR, "tree-%d" % TREE)
        if not os.path.exists(d + ".done"):
            log("generating %s" % d)
            subprocess.run(["rm", "-rf", d], check=True)
            run(BENCHDATA, "tree", d, str(TREE))
            open(d + ".done", "w").close()
    return main


# ---------------------------------------------------------------- benchmarks

def bench_main(main, out):
    size = os.path.getsize(os.path.join(main, "raw.bin"))
    raw = os.path.join(main, "raw.bin")
    warm(raw)
    want = read("fromfile", raw, "crc")["crc"]
    stores = V2 + V3
    # method -> store -> [seconds]
    res = {m: {s: [] for s in stores} for m in ("python", "mount", "cat")}
    cpu = {m: {s: [] for s in stores} for m in ("python", "mount", "cat")}
    ceil = {"fromfile": [], "cat": []}
    for rnd in range(ROUNDS):
        log("main: round %d/%d" % (rnd + 1, ROUNDS))
        for s in stores:
            warm(os.path.join(main, s))
        warm(raw)
        check = rnd == 0
        for i, s in enumerate(stores):
            path = os.path.join(main, s)
            methods = ["python", "mount", "cat"]
            methods = methods[(rnd + i) % 3:] + methods[:(rnd + i) % 3]  # alternate the order
            for m in methods:
                if m == "python" and s in V3:
                    continue  # zarr-python 2.13 reads no final-spec v3
                prewarm(size)
                if m == "python":
                    r = read("zarr", path, *(["crc"] if check else []))
                elif m == "mount":
                    r = mount_read(path, check)
                else:
                    r = dict(zip(("s", "cpu"), timed_cpu(ZARRFS, "cat", path, "arr")))
                if check and "crc" in r and (r["crc"] != want or r["n"] != size):
                    raise RuntimeError("%s %s: read back %d bytes, crc %x, want %d, %x" % (m, s, r["n"], r["crc"], size, want))
                res[m][s].append(r["s"])
                cpu[m][s].append(r["cpu"])
            log("  %s: %s" % (s, " ".join("%s %.2fs (cpu %.2fs)" % (m, res[m][s][-1], cpu[m][s][-1]) for m in res if res[m][s])))
        prewarm(size)
        ceil["fromfile"].append(read("fromfile", raw)["s"])
        prewarm(size)
        ceil["cat"].append(timed("cat", raw))
    med = {m: {s: statistics.median(v) for s, v in d.items() if v} for m, d in res.items()}
    mcpu = {m: {s: statistics.median(v) for s, v in d.items() if v} for m, d in cpu.items()}
    cf, cc = statistics.median(ceil["fromfile"]), statistics.median(ceil["cat"])
    out.append("### Read throughput, %d MiB float32 array (MiB/s, median of %d rounds)\n" % (size >> 20, ROUNDS))
    out.append("| store | stored MiB | zarr-python | mount, first read | zarrfs cat | mount / zarr-python | mount / cat | mount / ceiling |")
    out.append("|---|---|---|---|---|---|---|---|")
    for s in stores:
        py = mibs(size, med["python"][s]) if s in med["python"] else None
        mo = mibs(size, med["mount"][s])
        ca = mibs(size, med["cat"][s])
        out.append("| %s | %s | %s | %s | %s | %s | %.2f | %.2f |" % (
            s, fmt(du(os.path.join(main, s)) / (1 << 20)), fmt(py) if py else "n/a", fmt(mo), fmt(ca),
            "%.2f" % (mo / py) if py else "n/a", mo / ca, mo / mibs(size, cf)))
    out.append("\nCeiling (raw bytes, one page-cached file): np.fromfile %s MiB/s, cat > /dev/null %s MiB/s.\n"
               % (fmt(mibs(size, cf)), fmt(mibs(size, cc))))
    # A first read through the mount ends in the same read(2) into a fresh array as np.fromfile
    # of a page-cached file, with the FUSE round trips and the decoding added: np.fromfile's
    # figure bounds the mount, whatever the codec.
    bound = ["%s %.2f" % (s, med["python"][s] / cf) for s in stores if s in med["python"]]
    out.append("np.fromfile of the page-cached bytes / zarr-python, the most any first read through a mount can reach"
               " of zarr-python's speed: %s.\n" % ", ".join(bound))
    # On a machine whose speed swings from read to read (BENCH.md), the fastest of the rounds is
    # each method's least disturbed figure.
    best = {m: {s: min(v) for s, v in d.items() if v} for m, d in res.items()}
    out.append("Best of the %d rounds (MiB/s), each method's least disturbed figure:\n" % ROUNDS)
    out.append("| store | zarr-python | mount, first read | zarrfs cat | mount / zarr-python | mount / cat |")
    out.append("|---|---|---|---|---|---|")
    for s in stores:
        py = mibs(size, best["python"][s]) if s in best["python"] else None
        mo, ca = mibs(size, best["mount"][s]), mibs(size, best["cat"][s])
        out.append("| %s | %s | %s | %s | %s | %.2f |" % (
            s, fmt(py) if py else "n/a", fmt(mo), fmt(ca), "%.2f" % (mo / py) if py else "n/a", mo / ca))
    out.append("")
    out.append("CPU seconds (user + system, median) per read of the whole array, which the other work on the machine"
               " disturbs less than wall time: the mount's is the reader's plus the daemon's.\n")
    out.append("The last three columns are the most the mount could read at this CPU cost with every core busy"
               " the whole time (%d cores: MiB/s = size / (CPU / cores)), and that figure against zarr-python's and"
               " `zarrfs cat`'s throughput above: where it is below a goal, no scheduling reaches the goal, only less"
               " CPU per byte.\n" % CORES)
    out.append("| store | zarr-python | mount (reader + daemon) | zarrfs cat | mount / zarr-python"
               " | mount, all cores busy | that / zarr-python | that / cat |")
    out.append("|---|---|---|---|---|---|---|---|")
    for s in stores:
        py = mcpu["python"].get(s)
        full = mcpu["mount"][s] / CORES  # seconds, every core busy
        out.append("| %s | %s | %.2f | %.2f | %s | %s | %s | %.2f |" % (
            s, "%.2f" % py if py else "n/a", mcpu["mount"][s], mcpu["cat"][s],
            "%.2f" % (mcpu["mount"][s] / py) if py else "n/a", fmt(mibs(size, full)),
            "%.2f" % (med["python"][s] / full) if s in med["python"] else "n/a", med["cat"][s] / full))
    out.append("")


class Serve:
    """A fresh `zarrfs serve PROTO --addr 127.0.0.1:0 STORE`; url is where it listens (WebDAV) and
    port its port (NFS), from the first line it prints."""

    def __init__(self, proto, store):
        self.logf = open(os.path.join(BENCH_DIR, "serve.log"), "a")
        self.p = subprocess.Popen([ZARRFS, "serve", proto, "--addr", "127.0.0.1:0", store],
                                  stdout=subprocess.PIPE, stderr=self.logf, text=True)
        line = self.p.stdout.readline()
        if not line:
            self.close()
            raise RuntimeError("zarrfs serve %s failed (see %s/serve.log)" % (proto, BENCH_DIR))
        self.port = line.split("127.0.0.1:")[1].split("/")[0].split()[0]
        self.url = "http://127.0.0.1:%s/" % self.port

    def close(self):
        self.p.terminate()
        try:
            self.p.wait(30)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.logf.close()

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()


def bench_serve(out):
    """Sequential read of SERVE_MIB MiB through the mount and the two servers, each fresh."""
    d = os.path.join(BENCH_DIR, "scale-%d" % SERVE_MIB)
    n = SERVE_MIB << 20
    have_nfs = subprocess.run(["sh", "-c", "command -v nfs-cat"], capture_output=True).returncode == 0
    with open("/proc/filesystems") as f:
        kernel_nfs = any(l.split()[-1:] == ["nfs"] for l in f)

    def fuse():
        with Mount(d) as m:
            return timed("cat", os.path.join(m.mnt, "arr", "data"))

    def webdav():
        with Serve("webdav", d) as s:
            return timed("curl", "-sSf", "-o", "/dev/null", s.url + "arr/data")

    def nfs_libnfs():
        with Serve("nfs", d) as s:
            return timed("nfs-cat", "nfs://127.0.0.1/arr/data?version=3&nfsport=%s&mountport=%s" % (s.port, s.port))

    def nfs_kernel():
        with Serve("nfs", d) as s:
            mnt = tempfile.mkdtemp(prefix="zarrfs-bench-nfs-")
            run("mount", "-t", "nfs", "-o", "vers=3,tcp,port=%s,mountport=%s,nolock,ro" % (s.port, s.port),
                "127.0.0.1:/", mnt)
            try:
                return timed("cat", os.path.join(mnt, "arr", "data"))
            finally:
                run("umount", mnt)
                os.rmdir(mnt)

    ways = [("FUSE mount (cat)", fuse), ("WebDAV (curl)", webdav)]
    if have_nfs:
        ways.append(("NFS, libnfs (nfs-cat)", nfs_libnfs))
    if kernel_nfs:
        ways.append(("NFS, kernel client (cat)", nfs_kernel))
    times = {w: [] for w, _ in ways}
    warm(d)
    for rnd in range(ROUNDS):
        order = ways[rnd % len(ways):] + ways[:rnd % len(ways)]
        for w, f in order:
            prewarm(n)
            times[w].append(f())
        log("serve: round %d/%d: %s" % (rnd + 1, ROUNDS, ", ".join("%s %.2fs" % (w, t[-1]) for w, t in times.items())))
    fuse_s = statistics.median(times[ways[0][0]])
    out.append("### Served trees: sequential first read of a %d MiB v3 zstd array on loopback (median of %d rounds)\n"
               % (SERVE_MIB, ROUNDS))
    out.append("| reader | MiB/s | best MiB/s | / FUSE mount |")
    out.append("|---|---|---|---|")
    for w, _ in ways:
        med = statistics.median(times[w])
        out.append("| %s | %s | %s | %.2f |" % (w, fmt(mibs(n, med)), fmt(mibs(n, min(times[w]))), fuse_s / med))
    if not kernel_nfs:
        out.append("\nThis kernel has no NFS client (no nfs in /proc/filesystems): NFS is read with libnfs only.")
    out.append("")


def bench_scale(out):
    out.append("### Scaling: first read through a fresh mount, v3 zstd (2 MiB chunks)\n")
    out.append("| array | MiB/s (median) | rounds | daemon peak RSS |")
    out.append("|---|---|---|---|")
    for s in SCALE:
        d = os.path.join(BENCH_DIR, "scale-%d" % s)
        warm(d)
        rounds = ROUNDS if s <= 512 else max(1, min(ROUNDS, 2))
        times, peaks = [], []
        for _ in range(rounds):
            prewarm(s << 20)
            r = mount_read(d)
            times.append(r["s"])
            peaks.append(r["peak"])
        n = s << 20
        out.append("| %d MiB | %s | %d | %d MiB |" % (s, fmt(mibs(n, statistics.median(times))), rounds, max(peaks) >> 20))
        log("scale %d MiB: %s" % (s, times))
    out.append("")


def bench_tree(out):
    d = os.path.join(BENCH_DIR, "tree-%d" % TREE)
    warm(d)
    again = "ls -lR again on the same mount"
    res = {"find": [], "ls -lR": [], again: []}
    for _ in range(ROUNDS):
        for name, cmd in (("find", ["find"]), ("ls -lR", ["ls", "-lR"])):
            with Mount(d) as m:
                res[name].append(timed(*cmd, m.mnt))
                if name == "ls -lR":
                    res[again].append(timed(*cmd, m.mnt))
    res["find (the store dir itself)"] = [timed("find", d) for _ in range(ROUNDS)]
    res["ls -lR (the store dir itself)"] = [timed("ls", "-lR", d) for _ in range(ROUNDS)]
    if TREE % 100 == 0:
        res["find, the same tree from a FUSE server doing nothing else (findfloor)"] = [
            floor_find(TREE // 100) for _ in range(ROUNDS)]
        res["ls -lR, the same tree from a FUSE server doing nothing else (findfloor -stat)"] = [
            floor_find(TREE // 100, ["-stat"], ["ls", "-lR"]) for _ in range(ROUNDS)]
    trips = []
    with Mount(d) as m:
        for _ in range(ROUNDS):
            trips += read("xattr", os.path.join(m.mnt, "g0000", "a000", "data"), "5000")["times"]
    trip = statistics.median(trips)
    dirs = 1 + (TREE + 99) // 100 + TREE  # root, groups, arrays
    out.append("### Hierarchy of %d arrays (v2 directory store, 8 chunks each; fresh mount each time)\n" % TREE)
    out.append("| command | seconds (median of %d) |" % ROUNDS)
    out.append("|---|---|")
    for k, v in res.items():
        out.append("| %s | %.2f |" % (k, statistics.median(v)))
    out.append("")
    out.append("One FUSE round trip (getxattr of a missing attribute, %d calls): median %.1f µs. find makes "
               "two READDIRPLUS requests per directory, %d in all: %.2f s of round trips alone.\n"
               % (len(trips), trip * 1e6, 2 * dirs, 2 * dirs * trip))


def floor_find(groups, flags=(), cmd=("find",)):
    """find (or cmd) over bench/findfloor's tree of groups x 100 arrays, on a fresh mount: seconds."""
    with Mount(None, server=[FINDFLOOR, *flags, "-groups", str(groups), "-arrays", "100"]) as m:
        return timed(*cmd, m.mnt)


def bench_pread(main, out):
    store = os.path.join(main, "v2-zstd")
    warm(store)
    cold, hot = [], []
    for _ in range(ROUNDS):
        with Mount(store) as m:
            r = read("pread", os.path.join(m.mnt, "arr", "data"), str(CHUNK_BYTES), "2000")
            cold += r["cold"]
            hot += r["warm"]

    def q(v, p):
        v = sorted(v)
        return v[min(len(v) - 1, int(p * len(v)))] * 1e3

    out.append("### Random 4 KiB preads, %d MiB v2 zstd array (2 MiB chunks), fresh mounts\n" % MIB)
    out.append("| | samples | median ms | p99 ms |")
    out.append("|---|---|---|---|")
    out.append("| cold (chunk not yet decoded) | %d | %.3f | %.3f |" % (len(cold), q(cold, .5), q(cold, .99)))
    out.append("| chunk cached (page not) | %d | %.3f | %.3f |" % (len(hot), q(hot, .5), q(hot, .99)))
    out.append("")


def machine():
    def sh(cmd):
        try:
            return subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.strip()
        except OSError:
            return "?"
    model = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2").strip()
    mem = sh("awk '/MemTotal/ {printf \"%.1f GiB\", $2/1048576}' /proc/meminfo")
    versions = sh(PY + " -c 'import zarr, numcodecs, numpy; print(\"zarr\", zarr.__version__, \"numcodecs\", numcodecs.__version__, \"numpy\", numpy.__version__)'")
    return ["- machine: %s, %d cores, %s RAM, kernel %s" % (model, os.cpu_count(), mem, platform.release()),
            "- %s; %s; %s" % (sh("go version"), versions, " ".join(MOUNT_ARGS) or "default mount flags"),
            "- load at start: %s" % sh("uptime")]


def warm_memory(mib=None):
    """Write mib MiB of the machine's free memory, rounded up to 128 MiB blocks (all but 1 GiB of
    MemFree when None, and never more) in a subprocess, then let it go. Returns the MiB written.

    The machine is a virtual machine whose memory the host backs when the guest first writes it,
    and takes back (virtio-balloon free page reporting, /sys/module/page_reporting) once the
    guest has left it free for about 2 s: writing 1 GiB took 0.13 s with the memory just freed,
    0.6 s after 2 s idle and 1.2-2.4 s after 5-10 s. A read whose result or page cache lands on
    such memory ran up to 10x slower (np.fromfile of the uncompressed array: 0.13 s or 1.3 s),
    whichever method. Memory written once at the start only helps the first reads, so every
    timed read is preceded by prewarm: the read then gets memory the host has just backed.
    """
    with open("/proc/meminfo") as f:
        free = next(int(line.split()[1]) for line in f if line.startswith("MemFree:")) >> 10
    room = max(free - 1024, 0)
    # Written in blocks of 128 MiB: as many as cover mib, as fit in room.
    blocks = room // 128 if mib is None else min(-(-mib // 128), room // 128)
    if blocks:
        subprocess.run([PY, "-c", "import numpy as np\n"
                        "b = [np.ones(1 << 24) for _ in range(%d)]" % blocks], check=True)
    return blocks * 128


def prewarm(nbytes):
    """warm_memory for a read of nbytes: its result, the mount's page cache of it, and room for
    the daemon's or zarr-python's own buffers."""
    warm_memory(3 * (nbytes >> 20) + 256)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "read":
        return reader(sys.argv[2:])
    t0 = time.time()
    main_dir = generate()
    if ONLY == ["gen"]:
        return
    warmed = warm_memory()
    out = ["## Run of %s UTC (BENCH_MIB=%d BENCH_ROUNDS=%d BENCH_SCALE_MIB=%s BENCH_TREE=%d)\n"
           % (time.strftime("%Y-%m-%d %H:%M", time.gmtime()), MIB, ROUNDS, ",".join(map(str, SCALE)), TREE)]
    out += machine() + ["- free memory written once before measuring: %d GiB, and before each timed read three times"
                        " what it reads (see warm_memory)" % (warmed >> 10), ""]
    if "main" in ONLY:
        bench_main(main_dir, out)
    if "scale" in ONLY:
        bench_scale(out)
    if "tree" in ONLY:
        bench_tree(out)
    if "pread" in ONLY:
        bench_pread(main_dir, out)
    if "serve" in ONLY:
        bench_serve(out)
    out.append("- load at end: %s; benchmark took %.0f s (data generation included)"
               % (subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(), time.time() - t0))
    print("\n".join(out))


if __name__ == "__main__":
    main()
