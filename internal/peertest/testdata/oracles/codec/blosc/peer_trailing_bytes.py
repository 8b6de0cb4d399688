import sys, numpy as np, numcodecs
src = (np.arange(4096, dtype="<i4") * 7 % 1000).astype("<i4")
chunk = numcodecs.Blosc(cname="lz4", clevel=5, shuffle=1).encode(src)
tail = bytes(range(13))
sys.stdout.buffer.write(len(chunk).to_bytes(4, "little") + chunk + tail)
got = numcodecs.Blosc().decode(chunk + tail)
assert bytes(got) == src.tobytes(), "c-blosc does not ignore the tail"
sys.stdout.buffer.write(src.tobytes())
