"""Chunk layouts and data beyond make bench's: `make bench-layouts` runs it with /usr/bin/python3.

make bench reads arrays whose chunks are whole rows of quantised data. Users' arrays often
have neither: zarr-python's default chunks of a 2-D array are square tiles (every C-order row
crosses many chunks), older stores have small chunks, and measured values keep every bit of
noise (zstd then codes them as Huffman literals, not matches). This script writes one 8192 x
8192 float32 array (256 MiB: a smooth field plus full-precision noise) with zarr-python in
several layouts, then times, in alternating rounds, zarr-python's z[:], np.fromfile of the
array's data on a freshly mounted zarrfs (the first read) and `zarrfs cat > /dev/null`, and
prints a Markdown table of medians (MiB/s) and ratios.

  default-blosc  zarr-python's defaults: chunks (512, 512), Blosc lz4 + shuffle
  default-zstd   chunks (512, 512), Zstd level 3
  small-blosc    chunks (64, 256) (64 KiB), Blosc lz4 + shuffle
  small-zstd     chunks (64, 256), Zstd level 3
  tiles-zstd     chunks (1024, 1024) (4 MiB), Zstd level 3
  big-zstd       chunks (2048, 8192) (64 MiB), Zstd level 3

Environment: BENCH_DIR [/tmp/zarrfs-bench] (the stores go to BENCH_DIR/layouts, kept for the
next run), BENCH_ROUNDS [5], LAYOUTS [all of the above, comma-separated].
"""

import os
import statistics
import subprocess
import sys
import time

import bench

# name: (chunks, compressor); "default" is zarr-python's (Blosc lz4 + shuffle, clevel 5).
LAYOUTS = {
    "default-blosc": ((512, 512), "default"),
    "default-zstd": ((512, 512), "zstd"),
    "small-blosc": ((64, 256), "default"),
    "small-zstd": ((64, 256), "zstd"),
    "tiles-zstd": ((1024, 1024), "zstd"),
    "big-zstd": ((2048, 8192), "zstd"),
}

# gen OUT [ROWS COLS COMPRESSOR]: the array as raw bytes (no more arguments) or as a store.
GEN = """
import sys, numpy as np, numcodecs, zarr
rng = np.random.default_rng(1)
y = np.linspace(0, 8, 8192, dtype=np.float32)[:, None]
x = np.linspace(0, 8, 8192, dtype=np.float32)[None, :]
a = (np.sin(y) * np.cos(x) + rng.standard_normal((8192, 8192), dtype=np.float32) * 0.01).astype("<f4")
if len(sys.argv) == 2:
    a.tofile(sys.argv[1])
else:
    kw = {} if sys.argv[4] == "default" else {"compressor": numcodecs.Zstd(level=3)}
    zarr.open_group(sys.argv[1], mode="w").create_dataset(
        "arr", data=a, chunks=(int(sys.argv[2]), int(sys.argv[3])), **kw)
"""


def main():
    d = os.path.join(bench.BENCH_DIR, "layouts")
    os.makedirs(d, exist_ok=True)
    names = [n for n in os.environ.get("LAYOUTS", ",".join(LAYOUTS)).split(",") if n]
    raw = os.path.join(d, "raw.bin")
    for name in ["raw"] + names:
        path = raw if name == "raw" else os.path.join(d, name)
        if not os.path.exists(path + ".done"):
            bench.log("generating %s" % path)
            subprocess.run(["rm", "-rf", path], check=True)
            args = [] if name == "raw" else [str(LAYOUTS[name][0][0]), str(LAYOUTS[name][0][1]), LAYOUTS[name][1]]
            bench.run(bench.PY, "-c", GEN, path, *args)
            open(path + ".done", "w").close()
    size = os.path.getsize(raw)
    res = {n: {"python": [], "mount": [], "cat": []} for n in names}
    for rnd in range(bench.ROUNDS):
        bench.log("layouts: round %d/%d" % (rnd + 1, bench.ROUNDS))
        for n in names:
            st = os.path.join(d, n)
            bench.warm(st)
            bench.prewarm(size)
            res[n]["python"].append(bench.read("zarr", st)["s"])
            bench.prewarm(size)
            res[n]["mount"].append(bench.mount_read(st)["s"])
            bench.prewarm(size)
            t = time.perf_counter()
            subprocess.run([bench.ZARRFS, "cat", st, "arr"], stdout=subprocess.DEVNULL, check=True)
            res[n]["cat"].append(time.perf_counter() - t)
    mib = size / (1 << 20)
    print("| layout | zarr-python | mount, first read | zarrfs cat | mount / zarr-python | mount / cat |")
    print("|---|---|---|---|---|---|")
    for n in names:
        m = {k: statistics.median(v) for k, v in res[n].items()}
        print("| %s | %s | %s | %s | %.2f | %.2f |" % (
            n, bench.fmt(mib / m["python"]), bench.fmt(mib / m["mount"]), bench.fmt(mib / m["cat"]),
            m["python"] / m["mount"], m["cat"] / m["mount"]))


if __name__ == "__main__":
    sys.exit(main())
