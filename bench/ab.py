"""A/B comparison of zarrfs builds or settings on fresh-mount first reads (BENCH.md, "Not done").

  /usr/bin/python3 bench/ab.py STORE ARRAY ROUNDS NAME:BINARY[;VAR=VALUE,...] ...

Each round mounts STORE once per variant (bench.py's Mount, its log in BENCH_DIR/mount.log;
the variants' order alternates from one round to the next), writes three times the array's
size plus 256 MiB of free memory in a subprocess so that the host has backed it (bench.py's
warm_memory), and times a single readv of
MOUNT/ARRAY/data into a buffer allocated beforehand, in a fresh reader process: the first read
through a freshly started daemon, without the open or the reader's start. VAR=VALUE pairs go
into that variant's daemon environment (GOGC=400, GOMAXPROCS=2, ...). It prints each variant's
median and every round's time, in milliseconds.

This machine's timings move by a fifth between series of identical builds: compare variants
only within one run, over 20 rounds or more, and count the pairs each wins.

Example: /usr/bin/python3 bench/ab.py /tmp/zarrfs-bench/scale-16 arr 20 \\
             "old:/tmp/zarrfs-old" "new:bin/zarrfs" "gogc:bin/zarrfs;GOGC=400"
"""

import os
import statistics
import subprocess
import sys

from bench import PY, Mount, warm_memory

READER = r"""
import os, sys, time
import numpy as np
fd = os.open(sys.argv[1], os.O_RDONLY)
buf = np.empty(os.fstat(fd).st_size, dtype=np.uint8)
t = time.perf_counter()
n = os.readv(fd, [buf])
t = time.perf_counter() - t
if n != buf.size:
    sys.exit("read %d of %d bytes" % (n, buf.size))
print(t)
"""


def variant(spec):
    name, rest = spec.split(":", 1)
    binary, _, pairs = rest.partition(";")
    env = dict(os.environ)
    for pair in filter(None, pairs.split(",")):
        k, v = pair.split("=", 1)
        env[k] = v
    return name, os.path.abspath(binary), env


def first_read(binary, env, store, array):
    """Returns the seconds of the first read and the array's size in bytes."""
    with Mount(store, binary=binary, env=env) as m:
        data = os.path.join(m.mnt, array, "data")
        size = os.stat(data).st_size
        warm_memory(3 * (size >> 20) + 256)
        out = subprocess.run([PY, "-c", READER, data], capture_output=True, text=True, check=True)
        return float(out.stdout), size


def main(args):
    if len(args) < 4:
        sys.exit(__doc__)
    store, array, rounds = args[0], args[1], int(args[2])
    variants = [variant(s) for s in args[3:]]
    times = {name: [] for name, _, _ in variants}
    size = 0
    for r in range(rounds):
        for name, binary, env in (variants if r % 2 == 0 else variants[::-1]):
            s, size = first_read(binary, env, store, array)
            times[name].append(s)
    for name, _, _ in variants:
        t = times[name]
        print("%-12s median %6.1f ms  %6.0f MiB/s   %s" % (
            name, statistics.median(t) * 1e3, size / 2**20 / statistics.median(t),
            " ".join("%.1f" % (x * 1e3) for x in t)))


if __name__ == "__main__":
    main(sys.argv[1:])
