"""Hierarchies of many arrays with consolidated metadata (issue 42): `make bench-hierarchy` runs it
with /usr/bin/python3 and prints a Markdown table for BENCH.md.

For each size N of BENCH_HIER_SIZES [10000,100000,1000000] it writes (once, under BENCH_DIR)
`benchdata consolidated DIR N`: N int32 arrays of metadata only in groups of 100, with a
.zmetadata as zarr-python writes it and each node's own .zgroup/.zarray (1,000,000 arrays: only
the root's .zgroup and .zmetadata, `bare`, which a consolidated mount reads alone). Then, on a
fresh mount each time: the time to read the .zmetadata (cat, page-cached), the time until the
mount answers `ls`, find over the whole tree and the daemon's peak RSS (VmHWM) after it; and
find over bench/findfloor's tree of the same shape (the floor: a FUSE server doing nothing else).

`hierarchy.py rounds N K` instead runs K alternating rounds over the N-array tree: a mount as
it is, one with GOGC=50 in the daemon's environment, and findfloor (mount time, find, peak RSS).
"""

import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

SIZES = [int(s) for s in os.environ.get("BENCH_HIER_SIZES", "10000,100000,1000000").split(",") if s]


def rounds(n, k):
    d = tree(n)
    for r in range(k):
        for gogc in ("", "50"):
            env = dict(os.environ)
            if gogc:
                env["GOGC"] = gogc
            t = time.perf_counter()
            with bench.Mount(d, env=env) as m:
                subprocess.run(["ls", m.mnt], check=True, stdout=subprocess.DEVNULL)
                up = time.perf_counter() - t
                find = bench.timed("find", m.mnt)
                peak = m.peak()
            print("round %d GOGC=%s: mount until ls %.2f s, find %.2f s, peak RSS %.0f MiB"
                  % (r, gogc or "100", up, find, peak / 2**20), flush=True)
        print("round %d findfloor: find %.2f s" % (r, bench.floor_find((n + 99) // 100)), flush=True)


def tree(n):
    """The N-array tree under BENCH_DIR, written once."""
    d = os.path.join(bench.BENCH_DIR, "consolidated-%d" % n)
    if not os.path.exists(d):
        extra = ["bare"] if n >= 1000000 else []
        bench.run(bench.BENCHDATA, "consolidated", d, str(n), *extra)
    return d


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "rounds":
        return rounds(int(sys.argv[2]), int(sys.argv[3]))
    out = ["### Hierarchies with consolidated metadata (%s UTC)\n" % time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
           "| arrays | .zmetadata MiB | cat .zmetadata s | mount until ls answers s | find s | entries "
           "| findfloor find s | find / floor | peak RSS MiB | bytes per array |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for n in SIZES:
        d = tree(n)
        zm = os.path.join(d, ".zmetadata")
        bench.warm(zm)
        cat = bench.timed("cat", zm)
        t = time.perf_counter()
        with bench.Mount(d) as m:
            subprocess.run(["ls", m.mnt], check=True, stdout=subprocess.DEVNULL)
            up = time.perf_counter() - t
            t = time.perf_counter()
            r = subprocess.run(["find", m.mnt], check=True, capture_output=True)
            find = time.perf_counter() - t
            entries = r.stdout.count(b"\n")
            peak = m.peak()
        floor = bench.floor_find((n + 99) // 100)
        out.append("| %d | %.1f | %.2f | %.2f | %.2f | %d | %.2f | %.2f | %.0f | %.0f |" % (
            n, os.path.getsize(zm) / 2**20, cat, up, find, entries, floor, find / floor, peak / 2**20, peak / n))
        print(out[-1], file=sys.stderr, flush=True)
    print("\n".join(out))


if __name__ == "__main__":
    main()
