import sys, json, numpy as np, numcodecs
vals = [b"ab\x00", b"", b"\xff'\"\\\t\n\r ~\x7f", b"it's", "text", [b"x", 1]]
a = np.empty(len(vals), dtype=object)
a[:] = vals
enc = numcodecs.MsgPack().encode(a)
def show(v):
    if isinstance(v, bytes): return repr(v)
    if isinstance(v, list): return "[" + ",".join(show(x) for x in v) + "]"
    return json.dumps(v)
sys.stdout.buffer.write(enc + b"\x00\x00\x00" + "\n".join(show(v) for v in vals).encode())
