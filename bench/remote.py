"""`make bench-remote`: zarrfs against zarr-python on a far store (see BENCH.md, Far stores).

Run as root (it mounts) with /usr/bin/python3. bench/farstore (built by make) makes a local
store look far away: each answer waits a first-byte delay, then its body is sent at a bandwidth
per connection. It serves a directory with Range requests (HTTP) or forwards to versitygw (S3).

Data, generated once into BENCH_DIR/remote: a float32 array of REMOTE_MIB MiB (256) in 1 MiB
zstd chunks, v2 consolidated, written by zarr-python (bench/gen.py's values); its v3 sharded
copy (2 MiB inner chunks, 8 MiB shards) by bench/benchdata; and a hierarchy of 1,000 arrays
(bench/benchdata tree) without .zmetadata, plus a copy consolidated by zarr-python.

At each delay of REMOTE_DELAYS (0,20,50,100 ms; bandwidth REMOTE_BW, 80e6 B/s per connection),
in REMOTE_ROUNDS (2) rounds whose order rotates, each read of the whole array:
  zarr-python 2.13 + fsspec (HTTP, aiohttp): zarr.open_consolidated(URL)["arr"][:], timed in process
  mount over HTTP and over S3: np.fromfile(MOUNT/arr/data) on a fresh mount
  mount over HTTP read by cat(1) > /dev/null on a fresh mount: the same reader as zarrfs cat's
  zarrfs cat over HTTP and over S3, > /dev/null, the whole process
Then, at 50 ms: random 4 KiB preads of the sharded array on a fresh mount (one per inner chunk,
cold); `find` over the S3 hierarchy (fresh mount, no consolidated metadata) against zarr-python
walking the consolidated copy over HTTP; and `zarrfs cat` against a server answering a quarter of
requests 503 SlowDown (the bytes checked, the log lines counted). Last (cache), at 50 ms, the
persistent disk cache: a fresh mount without it, one with an empty --cache-dir (cold) and a remount
with the folder that filled (warm), against a fresh mount of the local directory. The cache folder is
REMOTE_CACHE_DIR (BENCH_DIR/remote/diskcache), a new one each round.
Virtual (virtual), at 50 ms: the same array as a Kerchunk JSON reference set (far.refs.json: its
chunks ranges of one file far.bin, the chunk files back to back, as kerchunk references a NetCDF
file) and as an Icechunk repository (far.icechunk, spec 1, written by bench/benchdata icechunk: the
same zstd chunks, native), each read whole on a fresh mount and by `zarrfs cat`, against the plain
store; the bytes checked against raw.bin in the first round.
"""

import os
import statistics
import subprocess
import sys
import time
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402  (Mount, read, prewarm, machine, …)

HERE = bench.HERE
PY = bench.PY
DIR = os.path.join(bench.BENCH_DIR, "remote")
MIB = int(bench.env("REMOTE_MIB", "256"))
ROUNDS = int(bench.env("REMOTE_ROUNDS", "2"))
DELAYS = [int(d) for d in bench.env("REMOTE_DELAYS", "0,20,50,100").split(",") if d]
BW = float(bench.env("REMOTE_BW", "80e6"))
TREE = int(bench.env("REMOTE_TREE", "1000"))
ONLY = bench.env("REMOTE_ONLY", "read,pread,tree,throttle,cache,virtual").split(",")
CACHE_DIR = bench.env("REMOTE_CACHE_DIR", os.path.join(DIR, "diskcache"))  # see bench_cache
FARSTORE = os.path.abspath(bench.env("FARSTORE", os.path.join(bench.ROOT, "bin", "farstore")))
AK, SK = "benchkey", "benchsecret12345"
S3ENV = dict(os.environ, AWS_ACCESS_KEY_ID=AK, AWS_SECRET_ACCESS_KEY=SK)
log = bench.log


def versitygw_bin():
    for p in os.environ.get("PATH", "").split(":") + [os.path.expanduser("~/go/bin")]:
        if os.access(os.path.join(p, "versitygw"), os.X_OK):
            return os.path.join(p, "versitygw")
    gopath = subprocess.run(["go", "env", "GOPATH"], capture_output=True, text=True).stdout.strip()
    return os.path.join(gopath, "bin", "versitygw")


def generate():
    os.makedirs(DIR, exist_ok=True)
    far = os.path.join(DIR, "http", "far.zarr")
    if not os.path.exists(os.path.join(DIR, "far.done")):
        log("generating %s" % far)
        subprocess.run(["rm", "-rf", os.path.join(DIR, "http"), os.path.join(DIR, "s3")], check=True)
        os.makedirs(os.path.dirname(far))
        code = ("import sys, numpy as np, numcodecs, zarr\n"
                "sys.path.insert(0, %r)\n"
                "import gen\n"
                "rows = (%d << 20) // (gen.COLS * 4)\n"
                "g = zarr.open_group(%r, mode='w')\n"
                "a = g.create_dataset('arr', shape=(rows, gen.COLS), chunks=(256, gen.COLS), dtype='<f4',"
                " compressor=numcodecs.Zstd(level=3), fill_value=0)\n"
                "rng = np.random.default_rng(1)\n"
                "with open(%r, 'wb') as raw:\n"
                "    for r0 in range(0, rows, gen.SLAB_ROWS):\n"
                "        s = gen.slab(r0, min(gen.SLAB_ROWS, rows - r0), rng)\n"
                "        a[r0:r0 + len(s)] = s\n"
                "        raw.write(s.tobytes())\n"
                "zarr.consolidate_metadata(%r)\n") % (HERE, MIB, far, os.path.join(DIR, "raw.bin"), far)
        bench.run(PY, "-c", code)
        bench.run(bench.BENCHDATA, "convert", far, os.path.join(DIR, "http", "sharded.zarr"), "sharded")
        tree = os.path.join(DIR, "http", "tree.zarr")
        bench.run(bench.BENCHDATA, "tree", tree, str(TREE))
        # The S3 bucket "bench" (versitygw's posix backend: bucket = directory) holds the same
        # stores; zarr-python's walk reads a consolidated copy of the tree over HTTP.
        os.makedirs(os.path.join(DIR, "s3"))
        bench.run("cp", "-a", os.path.join(DIR, "http"), os.path.join(DIR, "s3", "bench"))
        bench.run("cp", "-a", tree, os.path.join(DIR, "http", "treecons.zarr"))
        bench.run(PY, "-c", "import zarr; zarr.consolidate_metadata(%r)" % os.path.join(DIR, "http", "treecons.zarr"))
        open(os.path.join(DIR, "far.done"), "w").close()
    if not os.path.exists(os.path.join(DIR, "virtual.done")):
        generate_virtual(far)
        open(os.path.join(DIR, "virtual.done"), "w").close()


def generate_virtual(far):
    """far.refs.json and far.bin (Kerchunk, JSON v1) and far.icechunk (Icechunk) beside far.zarr."""
    import json
    log("generating the Kerchunk and Icechunk copies of %s" % far)
    http = os.path.dirname(far)
    refs = {}
    for key in (".zgroup", ".zattrs", "arr/.zarray", "arr/.zattrs"):
        p = os.path.join(far, key)
        if os.path.exists(p):
            refs[key] = open(p).read()
    names = sorted((n for n in os.listdir(os.path.join(far, "arr")) if not n.startswith(".")),
                   key=lambda n: [int(x) for x in n.split(".")])
    off = 0
    with open(os.path.join(http, "far.bin"), "wb") as blob:
        for n in names:
            b = open(os.path.join(far, "arr", n), "rb").read()
            blob.write(b)
            refs["arr/" + n] = ["far.bin", off, len(b)]
            off += len(b)
    with open(os.path.join(http, "far.refs.json"), "w") as f:
        json.dump({"version": 1, "refs": refs}, f)
    bench.run(bench.BENCHDATA, "icechunk", far, os.path.join(http, "far.icechunk"))


class Proc:
    """A background server; url is the first line it prints (farstore) or given."""

    def __init__(self, args, env=None, url=None, logname="servers.log"):
        self.logf = open(os.path.join(DIR, logname), "a")
        self.p = subprocess.Popen(args, stdout=subprocess.PIPE if url is None else self.logf,
                                  stderr=self.logf, env=env, text=True)
        if url is None:
            url = self.p.stdout.readline().strip()
            if not url.startswith("http://"):
                raise RuntimeError("%s did not start (see %s)" % (args[0], DIR))
        self.url = url

    def close(self):
        self.p.terminate()
        self.p.wait()
        self.logf.close()


def start_s3():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    env = dict(os.environ, ROOT_ACCESS_KEY=AK, ROOT_SECRET_KEY=SK)
    p = Proc([versitygw_bin(), "--port", "127.0.0.1:%d" % port, "posix", os.path.join(DIR, "s3")], env=env,
             url="http://127.0.0.1:%d" % port)
    deadline = time.time() + 20
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return p
        except OSError:
            if time.time() > deadline or p.p.poll() is not None:
                raise RuntimeError("versitygw did not start (see %s/servers.log)" % DIR)
            time.sleep(0.05)


def farstore(delay, *args):
    return Proc([FARSTORE, "-delay", "%dms" % delay, "-bw", str(BW), *args])


def s3flags(url):
    return ["--s3-endpoint", url, "--s3-path-style"]


def bench_read(s3, out):
    size = os.path.getsize(os.path.join(DIR, "raw.bin"))
    want = zlib.crc32(open(os.path.join(DIR, "raw.bin"), "rb").read())
    methods = ["python", "mount-http", "mount-s3", "mount-http-cat", "cat-http", "cat-s3"]
    res = {d: {m: [] for m in methods} for d in DELAYS}
    # CPU seconds of each read: the reading process, the zarrfs process (the daemon, or zarrfs
    # cat) and the servers (farstore, and versitygw behind the S3 one), which share the cores.
    cpu = {d: {m: [] for m in methods} for d in DELAYS}
    for d in DELAYS:
        h, p = farstore(d, "-dir", os.path.join(DIR, "http")), farstore(d, "-target", s3.url)
        servers = lambda: sum(bench.proc_cpu(x.p.pid) for x in (h, p, s3))  # noqa: E731
        try:
            for rnd in range(ROUNDS):
                order = methods[rnd % len(methods):] + methods[:rnd % len(methods)]
                for m in order:
                    bench.prewarm(size)
                    check = rnd == 0 and m in ("python", "mount-http", "mount-s3")
                    crc = ["crc"] if check else []
                    s0, zf = servers(), 0.0
                    if m == "python":
                        r = bench.read("zarr-http", h.url + "/far.zarr", *crc)
                    elif m == "mount-http-cat":
                        with bench.Mount(h.url + "/far.zarr", [], env=S3ENV) as mnt:
                            z0 = bench.proc_cpu(mnt.p.pid)
                            s, c = bench.timed_cpu("cat", os.path.join(mnt.mnt, "arr", "data"))
                            r, zf = {"s": s, "cpu": c}, bench.proc_cpu(mnt.p.pid) - z0
                    elif m.startswith("mount"):
                        store, extra = (h.url + "/far.zarr", []) if m == "mount-http" else ("s3://bench/far.zarr", s3flags(p.url))
                        with bench.Mount(store, extra, env=S3ENV) as mnt:
                            z0 = bench.proc_cpu(mnt.p.pid)
                            r = bench.read("fromfile", os.path.join(mnt.mnt, "arr", "data"), *crc)
                            zf = bench.proc_cpu(mnt.p.pid) - z0
                    else:
                        store, extra = (h.url + "/far.zarr", []) if m == "cat-http" else ("s3://bench/far.zarr", s3flags(p.url))
                        s, zf = bench.timed_cpu(bench.ZARRFS, "cat", *extra, store, "arr", env=S3ENV)
                        r = {"s": s, "cpu": 0.0}
                    if check and (r["crc"] != want or r["n"] != size):
                        raise RuntimeError("%s at %d ms: read back %d bytes, crc %x; want %d, %x" % (m, d, r["n"], r["crc"], size, want))
                    res[d][m].append(r["s"])
                    cpu[d][m].append((r["cpu"], zf, servers() - s0))
                log("  %d ms round %d: %s" % (d, rnd + 1, " ".join("%s %.2fs" % (m, res[d][m][-1]) for m in methods)))
        finally:
            h.close()
            p.close()
    out.append("### Whole-array reads, %d MiB float32 in 1 MiB zstd chunks (MB/s, median of %d rounds; %.0f MB/s per connection)\n"
               % (size >> 20, ROUNDS, BW / 1e6))
    out.append("| first-byte delay | zarr-python + fsspec | mount HTTP | mount S3 | mount HTTP, cat(1) | cat HTTP | cat S3 "
               "| mount HTTP / python | cat HTTP / python | mount / cat (HTTP) | mount, cat(1) / cat (HTTP) | S3 / HTTP (mount) |")
    out.append("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for d in DELAYS:
        mb = {m: size / 1e6 / statistics.median(res[d][m]) for m in methods}
        out.append("| %d ms | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | %.2f | %.2f | %.2f | %.2f | %.2f |" % (
            d, mb["python"], mb["mount-http"], mb["mount-s3"], mb["mount-http-cat"], mb["cat-http"], mb["cat-s3"],
            mb["mount-http"] / mb["python"], mb["cat-http"] / mb["python"], mb["mount-http"] / mb["cat-http"],
            mb["mount-http-cat"] / mb["cat-http"], mb["mount-s3"] / mb["mount-http"]))
    out.append("")
    cpu_table(out, size, res, cpu)


def cpu_table(out, size, res, cpu):
    """The CPU each read took, and what it bounds: a read whose processes together take C CPU-s
    lasts at least C / cores, however well it overlaps fetching, decoding and delivering."""
    shown = ["python", "mount-http", "mount-s3", "cat-http"]
    out.append("CPU-s per read (medians): reader + zarrfs + servers (farstore, versitygw for S3). "
               "Bound: the read's MB/s were all %d cores busy with that CPU for its whole length; "
               "mount bound / python (/ cat): the most the mount could reach against zarr-python's (zarrfs cat's) "
               "measured read; S3 bound / HTTP bound: the same over S3, where versitygw shares the cores.\n" % bench.CORES)
    out.append("| first-byte delay | %s | mount HTTP bound MB/s | bound / python | bound / cat | S3 bound / HTTP bound |"
               % " | ".join(shown))
    out.append("|---|%s---|---|---|---|" % ("---|" * len(shown)))
    for d in DELAYS:
        med = {m: [statistics.median(c[i] for c in cpu[d][m]) for i in range(3)] for m in shown}
        bound = size / 1e6 / (sum(med["mount-http"]) / bench.CORES)
        python = size / 1e6 / statistics.median(res[d]["python"])
        cat = size / 1e6 / statistics.median(res[d]["cat-http"])
        s3 = size / 1e6 / (sum(med["mount-s3"]) / bench.CORES)
        out.append("| %d ms | %s | %.0f | %.2f | %.2f | %.2f |" % (
            d, " | ".join("%.2f + %.2f + %.2f" % tuple(med[m]) for m in shown), bound, bound / python, bound / cat,
            s3 / bound))
    out.append("")


def q(v, p):
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))] * 1e3


def bench_pread(out, d=50):
    h = farstore(d, "-dir", os.path.join(DIR, "http"))
    cold, warm = [], []
    try:
        for _ in range(ROUNDS):
            with bench.Mount(h.url + "/sharded.zarr") as m:
                r = bench.read("pread", os.path.join(m.mnt, "arr", "data"), str(bench.CHUNK_BYTES), "200")
                cold += r["cold"]
                warm += r["warm"]
    finally:
        h.close()
    per = d + bench.CHUNK_BYTES / BW * 1e3
    out.append("### Random 4 KiB preads, v3 sharded copy (2 MiB inner chunks, 8 MiB shards), %d ms away, fresh mounts\n" % d)
    out.append("| | samples | median ms | p99 ms |")
    out.append("|---|---|---|---|")
    out.append("| cold (one per inner chunk) | %d | %.1f | %.1f |" % (len(cold), q(cold, .5), q(cold, .99)))
    out.append("| chunk cached (page not) | %d | %.3f | %.3f |" % (len(warm), q(warm, .5), q(warm, .99)))
    out.append("\nOne round trip plus one inner chunk's transfer: %.0f ms.\n" % per)


def bench_tree(s3, out, d=50):
    h, p = farstore(d, "-dir", os.path.join(DIR, "http")), farstore(d, "-target", s3.url)
    res = {"find, mount S3 (no .zmetadata)": [], "zarr-python + fsspec walk, HTTP (consolidated)": []}
    try:
        for _ in range(ROUNDS):
            with bench.Mount("s3://bench/tree.zarr", s3flags(p.url), env=S3ENV) as m:
                res["find, mount S3 (no .zmetadata)"].append(bench.timed("find", m.mnt))
            res["zarr-python + fsspec walk, HTTP (consolidated)"].append(bench.read("zarr-walk", h.url + "/treecons.zarr")["s"])
    finally:
        h.close()
        p.close()
    out.append("### Hierarchy of %d arrays, %d ms away\n" % (TREE, d))
    out.append("| | seconds (median of %d) |" % ROUNDS)
    out.append("|---|---|")
    for k, v in res.items():
        out.append("| %s | %.2f |" % (k, statistics.median(v)))
    out.append("")


def check_read(what, r, size, want):
    """Fail unless reader result r holds the size bytes of raw.bin (CRC-32 want)."""
    if r["crc"] != want or r["n"] != size:
        raise RuntimeError("%s: read back %d bytes, crc %x; want %d, %x" % (what, r["n"], r["crc"], size, want))


def heading(what, size, d):
    """The heading of a table of whole-array reads on fresh mounts, d ms away."""
    return ("### %s, %d MiB float32 in 1 MiB zstd chunks, %d ms away, fresh mounts "
            "(MB/s, median of %d rounds; %.0f MB/s per connection)\n" % (what, size >> 20, d, ROUNDS, BW / 1e6))


def bench_cache(out, d=50):
    """The persistent disk cache (--cache-dir): the whole array read on a fresh mount of the far
    store (HTTP, d ms) without the cache, with an empty cache folder (cold), and after a remount
    with the folder the cold read filled (warm); against a fresh mount of the same data in a local
    directory. The folder is REMOTE_CACHE_DIR (BENCH_DIR/remote/diskcache; its files in the page
    cache after the cold read wrote them, as the local directory's are after bench.warm): a new one
    each round, all removed at the end. Removing one right before the next cold read would make
    that read's creates skip the inodes just deleted (an ext4 without a journal, as here, reads and
    skips the inodes of a block group deleted in the last minutes: see spreadDirs in
    store/diskcache/lock_linux.go)."""
    size = os.path.getsize(os.path.join(DIR, "raw.bin"))
    want = zlib.crc32(open(os.path.join(DIR, "raw.bin"), "rb").read())
    h = farstore(d, "-dir", os.path.join(DIR, "http"))
    methods = ["local", "far", "far-cold", "far-warm"]
    res = {m: [] for m in methods}
    cpu = {m: [] for m in methods}  # the daemon's CPU seconds during the read
    top = os.path.join(CACHE_DIR, "run-%d" % os.getpid())
    try:
        for rnd in range(ROUNDS):
            cache = os.path.join(top, "round-%d" % rnd)
            os.makedirs(cache)
            # far and far-cold swap places every other round (the warm read follows the cold one).
            for m in (methods if rnd % 2 == 0 else ["local", "far-cold", "far", "far-warm"]):
                bench.prewarm(size)
                crc = ["crc"] if rnd == 0 and m != "far" else []
                if m == "local":
                    store, extra = os.path.join(DIR, "http", "far.zarr"), []
                else:
                    store, extra = h.url + "/far.zarr", ([] if m == "far" else ["--cache-dir", cache])
                with bench.Mount(store, extra) as mnt:
                    z0 = bench.proc_cpu(mnt.p.pid)
                    r = bench.read("fromfile", os.path.join(mnt.mnt, "arr", "data"), *crc)
                    cpu[m].append(bench.proc_cpu(mnt.p.pid) - z0)
                if crc:
                    check_read("cache bench " + m, r, size, want)
                res[m].append(r["s"])
            log("  cache round %d: %s" % (rnd + 1, " ".join("%s %.2fs (daemon %.2f CPU-s)" % (m, res[m][-1], cpu[m][-1])
                                                            for m in methods)))
    finally:
        h.close()
        subprocess.run(["rm", "-rf", top], check=True)
    mb = {m: size / 1e6 / statistics.median(res[m]) for m in methods}
    out.append(heading("Disk cache (--cache-dir)", size, d))
    out.append("| local directory | far, no cache | far, empty cache (cold) | far, remount with the cache (warm) "
               "| warm / local (goal ≥ 0.9) | cold / no cache (goal ≈ 1) |")
    out.append("|---|---|---|---|---|---|")
    out.append("| %.0f | %.0f | %.0f | %.0f | %.2f | %.2f |" % (
        mb["local"], mb["far"], mb["far-cold"], mb["far-warm"], mb["far-warm"] / mb["local"], mb["far-cold"] / mb["far"]))
    out.append("| %s | | daemon CPU-s per read (medians) |" % " | ".join("%.2f" % statistics.median(cpu[m]) for m in methods))
    # The same ratios taken within each round (the reads of a round run minutes apart at most,
    # where the machine's speed drifts between rounds): their medians and spread.
    def per_round(a, b):
        r = [res[b][i] / res[a][i] for i in range(ROUNDS)]
        return "%.2f (%.2f–%.2f)" % (statistics.median(r), min(r), max(r))
    out.append("")
    out.append("Within each round (time over time, median and range over %d rounds): warm / local %s, cold / no cache %s."
               % (ROUNDS, per_round("far-warm", "local"), per_round("far-cold", "far")))
    out.append("")


def bench_virtual(out, d=50):
    """Virtual Zarr on a far store: the whole array read through a Kerchunk reference set and an
    Icechunk repository against the plain store it was made from, the same chunks at the same
    farstore (HTTP, d ms), on fresh mounts and by zarrfs cat."""
    size = os.path.getsize(os.path.join(DIR, "raw.bin"))
    want = zlib.crc32(open(os.path.join(DIR, "raw.bin"), "rb").read())
    h = farstore(d, "-dir", os.path.join(DIR, "http"))
    kinds = {"plain": ("/far.zarr", []), "kerchunk": ("/far.refs.json", []), "icechunk": ("/far.icechunk/", ["--ref", "main"])}
    methods = [(k, how) for k in kinds for how in ("mount", "cat")]
    res = {m: [] for m in methods}
    try:
        for rnd in range(ROUNDS):
            order = methods[rnd % len(methods):] + methods[:rnd % len(methods)]
            for kind, how in order:
                bench.prewarm(size)
                path, extra = kinds[kind]
                if how == "mount":
                    crc = ["crc"] if rnd == 0 else []
                    with bench.Mount(h.url + path, extra) as mnt:
                        r = bench.read("fromfile", os.path.join(mnt.mnt, "arr", "data"), *crc)
                    if crc:
                        check_read("virtual " + kind, r, size, want)
                    s = r["s"]
                else:
                    s, _ = bench.timed_cpu(bench.ZARRFS, "cat", *extra, h.url + path, "arr")
                res[(kind, how)].append(s)
            log("  virtual round %d: %s" % (rnd + 1, " ".join("%s %s %.2fs" % (k, how, res[(k, how)][-1]) for k, how in methods)))
    finally:
        h.close()
    mb = {m: size / 1e6 / statistics.median(res[m]) for m in methods}
    out.append(heading("Virtual Zarr", size, d))
    out.append("| | plain Zarr v2 | Kerchunk JSON (ranges of one file) | Icechunk spec 1 (native chunks) "
               "| Kerchunk / plain | Icechunk / plain |")
    out.append("|---|---|---|---|---|---|")
    for how in ("mount", "cat"):
        out.append("| %s | %.0f | %.0f | %.0f | %.2f | %.2f |" % (
            "mount, np.fromfile" if how == "mount" else "zarrfs cat", mb[("plain", how)], mb[("kerchunk", how)],
            mb[("icechunk", how)], mb[("kerchunk", how)] / mb[("plain", how)], mb[("icechunk", how)] / mb[("plain", how)]))
    out.append("")


def bench_throttle(out, d=50):
    h = farstore(d, "-dir", os.path.join(DIR, "http"), "-throttle", "0.25")
    want = zlib.crc32(open(os.path.join(DIR, "raw.bin"), "rb").read())
    try:
        t = time.perf_counter()
        p = subprocess.run([bench.ZARRFS, "cat", h.url + "/far.zarr", "arr"], capture_output=True, check=True)
        s = time.perf_counter() - t
    finally:
        h.close()
    lines = [line for line in p.stderr.decode().splitlines() if "throttling" in line]
    ok = zlib.crc32(p.stdout) == want
    out.append("Throttling (a quarter of requests answered 503 SlowDown, %d ms away): `zarrfs cat` read the array in %.2f s"
               " (%.0f MB/s), bytes %s, %d log line(s) about it.\n" % (d, s, len(p.stdout) / 1e6 / s,
                                                                    "identical" if ok else "DIFFERENT", len(lines)))
    if not ok:
        raise RuntimeError("throttled cat: wrong bytes")


def main():
    t0 = time.time()
    generate()
    bench.warm(DIR)
    out = ["## Far stores: run of %s UTC (REMOTE_MIB=%d REMOTE_ROUNDS=%d REMOTE_BW=%g)\n"
           % (time.strftime("%Y-%m-%d %H:%M", time.gmtime()), MIB, ROUNDS, BW)]
    out += bench.machine() + [""]
    s3 = start_s3()
    try:
        if "read" in ONLY:
            bench_read(s3, out)
        if "pread" in ONLY:
            bench_pread(out)
        if "tree" in ONLY:
            bench_tree(s3, out)
        if "throttle" in ONLY:
            bench_throttle(out)
        if "cache" in ONLY:
            bench_cache(out)
        if "virtual" in ONLY:
            bench_virtual(out)
    finally:
        s3.close()
    out.append("- load at end: %s; took %.0f s" % (subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip(),
                                                 time.time() - t0))
    print("\n".join(out))


if __name__ == "__main__":
    main()
