import sys, json, numpy as np, numcodecs
vals = [1.5, float("nan"), "NaN", None, [float("inf"), -float("inf")], {"k": float("nan")}]
a = np.empty(len(vals), dtype=object)
a[:] = vals
enc = numcodecs.JSON().encode(a)
want = "\n".join(json.dumps(v, separators=(",", ":")) for v in vals)
sys.stdout.buffer.write(enc + b"\x00" + want.encode())
