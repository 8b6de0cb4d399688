import sys, struct, numpy as np
a = sys.argv[1:]
for src, dst in zip(a[0::2], a[1::2]):
    arr = np.load(src, allow_pickle=True).reshape(-1, order="A")
    out = [struct.pack("<I", len(arr))]
    for v in arr:
        b = v.encode("utf-8") if isinstance(v, str) else bytes(v)
        out += [struct.pack("<I", len(b)), b]
    open(dst, "wb").write(b"".join(out))
