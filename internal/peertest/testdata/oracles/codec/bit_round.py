import sys, numcodecs, numpy as np
a = sys.argv[1:]
for raw, typ, keep in zip(a[0::3], a[1::3], a[2::3]):
    x = np.fromfile(raw, dtype=typ)
    np.asarray(numcodecs.BitRound(int(keep)).encode(x)).tofile(raw + ".out")
