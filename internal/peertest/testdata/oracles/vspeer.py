# vspeer.py PROGRAM RAW_PATH CHUNK_DIR CHUNK_BYTES ARGS...
#
# The peer side of peertest.VsPeer. PROGRAM (an oracle program's path) sets
# a (a one-dimensional numpy array) and codec (a numcodecs codec) from args
# (ARGS, strings). vspeer.py then writes a to RAW_PATH, encodes it in chunks
# of CHUNK_BYTES, writes them to CHUNK_DIR/0, CHUNK_DIR/1, ..., times the
# peer's decoding of them all (best of 5) and prints its MB/s.
import sys, time
import numpy as np, numcodecs
program = sys.argv[1]
raw_path, chunk_dir, chunk_bytes, args = sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
exec(compile(open(program).read(), program, "exec"))

a.tofile(raw_path)
per = chunk_bytes // a.itemsize
chunks = [codec.encode(a[i:i + per]) for i in range(0, a.size, per)]
for i, c in enumerate(chunks):
    open("%s/%d" % (chunk_dir, i), "wb").write(c)
best = None
for _ in range(5):
    t = time.perf_counter()
    for c in chunks:
        codec.decode(c)
    d = time.perf_counter() - t
    best = d if best is None else min(best, d)
print(a.nbytes / best / 1e6)
