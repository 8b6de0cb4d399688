"""Write the zarr-python stores of the zarrfs benchmark (run by bench.py with /usr/bin/python3).

gen.py DIR MIB writes, under DIR, v2 directory stores holding a float32 array "arr" of
MIB MiB (1024 columns, chunks of 512 x 1024 = 2 MiB): a smooth field plus noise, quantised
to 1/4096 so that it compresses moderately. One store per codec:

  v2-blosc-lz4   Blosc lz4, byte shuffle, clevel 5
  v2-zstd        Zstd level 3
  v2-gzip        GZip level 5
  v2-raw         no compressor

and raw.bin, the array's bytes (C order, little-endian) in one flat file.
"""

import os
import sys

import numcodecs
import numpy as np
import zarr

COLS, CHUNK_ROWS, SLAB_ROWS = 1024, 512, 8192

STORES = {
    "v2-blosc-lz4": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE),
    "v2-zstd": numcodecs.Zstd(level=3),
    "v2-gzip": numcodecs.GZip(level=5),
    "v2-raw": None,
}


def slab(r0, rows, rng):
    r = np.arange(r0, r0 + rows, dtype=np.float64)[:, None]
    c = np.arange(COLS, dtype=np.float64)[None, :]
    v = np.sin(r / 500) * np.cos(c / 70) + 0.05 * rng.standard_normal((rows, COLS))
    return (np.round(v * 4096) / 4096).astype("<f4")


def main():
    out, mib = sys.argv[1], int(sys.argv[2])
    rows = (mib << 20) // (COLS * 4)
    arrays = {}
    for name, comp in STORES.items():
        g = zarr.open_group(os.path.join(out, name), mode="w")
        arrays[name] = g.create_dataset("arr", shape=(rows, COLS), chunks=(CHUNK_ROWS, COLS),
                                        dtype="<f4", compressor=comp, fill_value=0)
    rng = np.random.default_rng(1)
    with open(os.path.join(out, "raw.bin"), "wb") as raw:
        for r0 in range(0, rows, SLAB_ROWS):
            n = min(SLAB_ROWS, rows - r0)
            s = slab(r0, n, rng)
            for a in arrays.values():
                a[r0:r0 + n] = s
            raw.write(s.tobytes())


if __name__ == "__main__":
    main()
