import sys, os, json, struct, numcodecs, numpy as np
d = sys.argv[1]
for i, it in enumerate(json.load(open(os.path.join(d, "manifest.json")))):
    c = numcodecs.get_codec(json.loads(it["config"]))
    if it["codes"]:
        enc = np.array(it["codes"], dtype=c.astype).tobytes()
    else:
        a = np.empty(len(it["values"]), dtype=object)
        a[:] = it["values"]
        enc = bytes(c.encode(a))
    dec = c.decode(enc)
    chunk = numcodecs.Zlib(level=1).encode(enc) if it["zlib"] else enc
    open(os.path.join(d, "%d.chunk" % i), "wb").write(chunk)
    parts = [struct.pack("<I", dec.size)]
    for v in dec:
        b = v.encode("utf-8")
        parts += [struct.pack("<I", len(b)), b]
    open(os.path.join(d, "%d.want" % i), "wb").write(b"".join(parts))
