# conditional_chunks.py builds conditional chunks with numcodecs, not
# with zarrfs: for each mask of two codecs it applies codecs[i] when bit
# i is set, in list order, and prepends the mask as header_bits/8 bytes,
# bit 0 standing for the first codec "using a little-endian bit order"
# (the spec's "Construct the Bitmask"). It prints {"config", "mask",
# "chunk", "want"} lines, hex bytes.
import json, numpy as np, numcodecs
rng = np.random.default_rng(37)
smooth = (np.arange(512, dtype="<f4") * 0.25).tobytes()
noise = rng.integers(0, 2**32, 256, dtype="<u4").tobytes()
configs = {
    "spec": ([numcodecs.Shuffle(elementsize=4), numcodecs.Zstd(level=5)], 1),
    "gzip16": ([numcodecs.Zstd(level=3), numcodecs.GZip(level=5)], 2),
}
for name, (codecs, hbytes) in configs.items():
    for raw in (smooth, noise):
        for mask in range(4):
            b = raw
            for i, c in enumerate(codecs):
                if mask >> i & 1:
                    b = bytes(c.encode(b))
            chunk = mask.to_bytes(hbytes, "little") + b
            print(json.dumps({"config": name, "mask": mask, "chunk": chunk.hex(), "want": raw.hex()}))
