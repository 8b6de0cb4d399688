# write_n5.py writes an N5 container with zarr-python 2.13's N5Store
# (its N5ChunkWrapper writes default-mode blocks and attributes.json as
# the N5 spec has them): datasets compressed by each compressor it can
# express (raw, gzip, zlib, bzip2, xz, blosc), a group with attributes, a
# directory without attributes.json (an implicit group: "any directory
# on the file system is an N5 group"), and edge blocks. For each dataset
# it writes NAME.bin: the values in N5's axis order (the fastest first:
# zarr-python's array transposed), little-endian, as zarrfs's data holds
# them.
import os, sys, shutil, numpy as np, zarr, numcodecs
root, ref = sys.argv[1], sys.argv[2]
s = zarr.N5Store(root)
g = zarr.group(store=s)
g.attrs["title"] = "n5 test"
rng = np.random.default_rng(5)
def ds(path, shape, chunks, dtype, compressor):
    a = g.create_dataset(path, shape=shape, chunks=chunks, dtype=dtype, compressor=compressor)
    v = (rng.standard_normal(shape) * 1000).astype(dtype) if np.dtype(dtype).kind == "f" else rng.integers(0, 200, shape).astype(dtype)
    a[...] = v
    open(os.path.join(ref, path.replace("/", "_") + ".bin"), "wb").write(np.ascontiguousarray(v.T).astype(np.dtype(dtype).newbyteorder("<")).tobytes())
ds("raw", (5, 7), (2, 3), ">u2", None)
ds("grp/gzip", (9, 4, 3), (4, 3, 2), ">f4", numcodecs.GZip(level=5))
ds("grp/zlib", (10,), (4,), ">i8", numcodecs.Zlib(level=1))
ds("bz2", (6, 6), (4, 4), ">f8", numcodecs.BZ2(level=9))
ds("xz", (6, 5), (5, 5), ">i4", numcodecs.LZMA(preset=3))
ds("blosc", (30, 20), (16, 16), ">u4", numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1))
ds("implicit/deep/u1", (11,), (4,), "|u1", None)
g["grp"].attrs["units"] = "m"
os.remove(os.path.join(root, "implicit", "attributes.json"))
