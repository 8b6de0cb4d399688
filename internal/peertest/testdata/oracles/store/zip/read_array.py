# read_array.py opens the archive argv[1] with zarr-python's ZipStore and
# checks the hierarchy zarrfs wrote: it prints "ok" or fails.
import sys, numpy as np, zarr
st = zarr.ZipStore(sys.argv[1], mode="r")
root = zarr.open_group(store=st, mode="r")
assert root.attrs["made by"] == "zarrfs", dict(root.attrs)
a = root["arr"]
want = np.arange(100, dtype="<i4").reshape(10, 10)
assert a.shape == (10, 10) and a.dtype == np.dtype("<i4"), (a.shape, a.dtype)
assert np.array_equal(a[:], want), a[:]
assert bytes(st["raw/bin"]) == bytes(range(256)) * 3
assert st["unicode/ü"] == b"umlaut"
st.close()
print("ok")
