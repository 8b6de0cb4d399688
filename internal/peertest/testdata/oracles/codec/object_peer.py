# object_peer.py has numcodecs encode an object array of mixed elements with
# json2 and msgpack2, and writes each encoding and each element as Python's
# json module writes it: json2's own settings (ASCII, sorted keys) for
# json2, ensure_ascii off for msgpack2, whose maps keep their order.
import json, sys, numcodecs, numpy as np
out = sys.argv[1]
elems = ["s", "é <&>", 1, -7, 2.5, 1e20, 1e-7, 100.0, None, True, False, [1, "x", [None]],
         {"b": 1, "a": "é"}, "line\nbreak", 2**63, -2**63]
a = np.empty(len(elems), dtype=object)
a[:] = elems
a = a.reshape(4, 4)
for name, codec, dump in (
        ("json2", numcodecs.JSON(), lambda e: json.dumps(e, ensure_ascii=True, separators=(",", ":"), sort_keys=True)),
        ("msgpack2", numcodecs.MsgPack(), lambda e: json.dumps(e, ensure_ascii=False, separators=(",", ":")))):
    open(out + "/" + name + ".bin", "wb").write(codec.encode(a))
    json.dump([dump(e) for e in elems], open(out + "/" + name + ".json", "w"))
