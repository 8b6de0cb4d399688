import sys, json, numpy as np, zarr, numcodecs
g = zarr.open_group(sys.argv[1], mode="w")
out = []
for name, dt, vals in [("i", "<i4", [[1, -2, 3], [], [2**31 - 1], [4, 5], None, None]),
                       ("f", "<f4", [[0.1, -1.5], [float("nan")], [1e-7, 3e20], [], [2.0], [0.0]])]:
    z = g.create_dataset(name, shape=(6,), chunks=(4,), dtype=object, object_codec=numcodecs.VLenArray(dt))
    v = np.empty(6, dtype=object)
    v[:] = [np.array(x, dtype=dt) for x in vals if x is not None] + [None] * sum(x is None for x in vals)
    n = sum(x is not None for x in vals)
    z[:n] = v[:n]
    for x in z[:]:
        out.append(json.dumps(x.tolist() if hasattr(x, "tolist") else x, separators=(",", ":")))
sys.stdout.write("\n".join(out) + "\n")
