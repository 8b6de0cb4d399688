import sys, zarr, numpy as np
g = zarr.open_group(sys.argv[1], mode="r")
p = g["precipitation"]
print(p.shape, p.dtype.str, p.order, p.attrs["_ARRAY_DIMENSIONS"])
print(repr(float(p[3, 7, 11])))
print(int(g["counts"][7]), g["counts"].dtype.str)
c = g["codecs"]
ref = np.arange(20)[:, None] * 1000 - np.arange(30)[None, :] ** 2
ok, n = True, 0
for k in sorted(c.array_keys()):
    try:
        a = c[k]
    except ValueError as e:  # a codec this numcodecs lacks (fletcher32 before 0.12)
        if "codec not available" in str(e):
            continue
        raise
    n += 1
    ok = ok and bool((a[:] == ref).all())
print(n >= 5 and ok)
