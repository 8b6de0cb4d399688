# read_v2.py reads each array NAME of the store and compares it, as
# little-endian C-order bytes, with NAME.bin; it prints one line per array.
import sys, json, numpy as np, zarr
root, refdir, names = sys.argv[1], sys.argv[2], sys.argv[3:]
g = zarr.open_group(zarr.DirectoryStore(root), mode="r")
for name in names:
    try:
        b = g[name][...]
        got = np.ascontiguousarray(np.asarray(b).astype(b.dtype.newbyteorder("<"))).tobytes()
        want = open(f"{refdir}/{name}.bin", "rb").read()
        print(name, "ok" if got == want else "differs: %d vs %d bytes" % (len(got), len(want)))
    except Exception as e:
        print(name, "error:", repr(e).replace("\n", " "))
