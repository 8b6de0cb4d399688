import sys, struct, numpy as np
a = sys.argv[1:]
for src, dst in zip(a[0::2], a[1::2]):
    arr = np.load(src, allow_pickle=True)
    flat = arr.reshape(-1)
    if arr.dtype != object:
        continue
    if all(isinstance(v, bytes) for v in flat):
        open(dst + ".bin", "wb").close()
    elif not all(isinstance(v, str) for v in flat):
        continue
    out = [struct.pack("<I", len(flat))]
    for v in flat:
        b = v if isinstance(v, bytes) else v.encode("utf-8")
        out += [struct.pack("<I", len(b)), b]
    open(dst, "wb").write(b"".join(out))
