# lzma_peer.py is numcodecsPeer for numcodecs' LZMA configurations, through
# Python's lzma module itself: numcodecs 0.11 passes "filters" to the xz
# decoder too, which Python refuses (an xz stream names its own filters).
import json, lzma, sys
for c in json.load(open(sys.argv[1])):
    cfg = json.loads(c["config"])
    form, filters = cfg.get("format", 1), cfg.get("filters")
    check = cfg.get("check", -1) if form in (0, 1) else -1
    raw = open(c["raw"], "rb").read()
    open(c["theirs"], "wb").write(lzma.compress(raw, format=form or 1, check=check, filters=filters))
    ours = open(c["ours"], "rb").read()
    open(c["decoded"], "wb").write(lzma.decompress(ours, format=form, filters=filters if form == 3 else None))
