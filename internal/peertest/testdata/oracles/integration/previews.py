"""The oracle of zarrfs's preview.png (integration/preview_test.go).

    previews.py write STORE          zarr-python writes the arrays; prints one JSON line per array
    previews.py check STORE MOUNT    reads each MOUNT/PATH/preview.png with PIL and prints one
                                     JSON line per array: {"path", "ok", "why", "rho"}

The check reads the arrays with zarr-python and compares each preview with
the plane docs/ARCHITECTURE.md ("The views of an array as files") names: the middle plane of the last two dimensions,
nearest-sampled at pixel centres to at most 512 pixels on the longer side;
transparent exactly where the elements are NaN or ±Inf; and the pixels'
luminance in the same order as the elements' values (Spearman's rho of at
least 0.9, scipy). A rank-1 array is a 512 × 256 chart: the height of each
pixel column's drawn pixels follows the mean of its run of elements.
"""

import json
import os
import sys

import numcodecs
import numpy as np
import zarr

TYPES = ["|b1", "|i1", "|u1", "<i2", ">u2", "<i4", "<u4", ">i8", "<u8", "<f2", "<f4", ">f8", "<c8", "<c16"]


def smooth(shape, dtype):
    """Values that vary smoothly along every dimension (a line chart of them
    is a line), in dtype's range."""
    grids = np.meshgrid(*[np.linspace(0, 3, n) for n in shape], indexing="ij")
    v = sum(np.sin(g * (k + 1)) for k, g in enumerate(grids)) if grids else np.zeros(shape)
    v = v / max(len(shape), 1)  # in [-1, 1]
    dt = np.dtype(dtype)
    if dt.kind == "b":
        return v > np.median(v)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        lo, hi = max(info.min, -1000), min(info.max, 1000)
        return np.round((v + 1) / 2 * (hi - lo) + lo).astype(dt)
    if dt.kind == "c":
        return (v + 1.5 + 0.5j * v).astype(dt)
    return (v * 100).astype(dt)


def cases():
    """(path, shape, chunks, dtype, values) of the arrays to write."""
    out = []
    for t in TYPES:
        name = t[1:] + ("_be" if t[0] == ">" else "")
        out.append((f"types/{name}", (40, 60), (16, 16), t, None))
        out.append((f"types/{name}_1d", (1000,), (128,), t, None))
    for rank in range(1, 6):
        shape = (5, 4, 3, 30, 50)[5 - rank:]
        out.append((f"ranks/f4_{rank}d", shape, tuple(min(d, 8) for d in shape), "<f4", None))
        out.append((f"ranks/i2_{rank}d", shape, tuple(min(d, 8) for d in shape), "<i2", None))
    nan = smooth((3, 20, 30), "<f8")
    nan[1, 0:5, :] = np.nan
    nan[1, 10, 3:9] = np.inf
    nan[1, 12, 0:4] = -np.inf
    out.append(("special/nan_inf", nan.shape, (2, 8, 8), "<f8", nan))
    nan1 = smooth((900,), "<f4")
    nan1[100:150] = np.nan
    out.append(("special/nan_1d", nan1.shape, (100,), "<f4", nan1))
    out.append(("special/constant", (3, 10, 20), (3, 10, 20), "<i4", np.full((3, 10, 20), 7, "<i4")))
    out.append(("special/all_nan", (10, 10), (5, 5), "<f4", np.full((10, 10), np.nan, "<f4")))
    for shape in [(1,), (1, 1), (1, 1, 1)]:
        out.append((f"special/one_{len(shape)}d", shape, shape, "<f8", np.full(shape, 2.5)))
    out.append(("big/wide", (3, 700, 1100), (1, 128, 128), "<f4", None))
    out.append(("big/tall", (2000, 300), (256, 300), "<u2", None))
    out.append(("big/long", (100000,), (10000,), "<f8", None))
    return out


def write(store):
    root = zarr.open_group(store, mode="w")
    for path, shape, chunks, dtype, values in cases():
        if values is None:
            values = smooth(shape, dtype)
        root.create_dataset(path, data=values, shape=shape, chunks=chunks, dtype=dtype)
        print(json.dumps({"path": path, "shape": list(shape), "dtype": dtype}))
    # An OME-NGFF 0.4 image pyramid: level 0 is over a 2 MiB budget, level 1
    # (800 × 800, 1.25 MiB) covers 512 pixels.
    img = root.create_group("pyramid")
    img.attrs["multiscales"] = [{"version": "0.4", "name": "img",
                                 "axes": [{"name": "y", "type": "space"}, {"name": "x", "type": "space"}],
                                 "datasets": [{"path": str(k)} for k in range(3)]}]
    base = smooth((1600, 1600), "<u2")
    for k in range(3):
        level = base[:: 2 ** k, :: 2 ** k]
        img.create_dataset(str(k), data=level, chunks=(256, 256), dtype="<u2")
    root.create_dataset("over_budget", data=base, chunks=(256, 256), dtype="<u2")
    # A zlib array whose chunk (0, 1) is not zlib: its preview's read fails.
    root.create_dataset("corrupt", data=smooth((20, 20), "<f4"), chunks=(10, 10), compressor=numcodecs.Zlib())
    with open(os.path.join(store, "corrupt", "0.1"), "wb") as f:
        f.write(b"not zlib")


def sample(n, k):
    return (2 * np.arange(k) + 1) * n // (2 * k)


def image_side(n, m):
    if n <= 512 and m <= 512:
        return n
    longer = max(n, m)
    return max((n * 512 + longer // 2) // longer, 1)


def spearman(a, b):
    from scipy.stats import spearmanr
    return float(spearmanr(a, b).correlation)


def values(a):
    a = np.asarray(a)
    if a.dtype.kind == "c":
        return np.abs(a).astype(np.float64)
    return a.astype(np.float64)


def check_plane(arr, im):
    shape = arr.shape
    mid = tuple(d // 2 for d in shape[:-2])
    H, W = shape[-2:]
    h, w = image_side(H, W), image_side(W, H)
    if im.size != (w, h):
        return False, f"image {im.size}, want {(w, h)}", None
    plane = values(arr[mid])
    expected = plane[sample(H, h)][:, sample(W, w)]
    rgba = np.asarray(im.convert("RGBA")).astype(np.float64)
    alpha = rgba[..., 3]
    fin = np.isfinite(expected)
    if not np.array_equal(alpha == 0, ~fin) or not np.all(alpha[fin] == 255):
        return False, f"transparent pixels {int((alpha == 0).sum())}, non-finite elements {int((~fin).sum())}", None
    if not fin.any():
        return True, "", None
    lum = 0.299 * rgba[..., 0] + 0.587 * rgba[..., 1] + 0.114 * rgba[..., 2]
    e, l = expected[fin], lum[fin]
    if e.min() == e.max():
        return bool(l.min() == l.max()), "a constant plane in several colours", None
    rho = spearman(e, l)
    return rho >= 0.9, f"Spearman {rho:.3f} < 0.9", rho


def check_chart(arr, im):
    if im.size != (512, 256):
        return False, f"image {im.size}, want (512, 256)", None
    v = values(arr[:])
    n = len(v)
    rgb = np.asarray(im.convert("RGB")).astype(np.int64)
    drawn = np.any(rgb != 255, axis=2)  # the background is white
    heights, means = [], []
    for c in range(512):
        s = c * n // 512
        e = max((c + 1) * n // 512, s + 1)
        run = v[s:e]
        run = run[np.isfinite(run)]
        rows = np.nonzero(drawn[:, c])[0]
        if len(run) == 0:
            if len(rows):
                return False, f"column {c} of non-finite elements drawn", None
            continue
        if len(rows) == 0:
            return False, f"column {c} not drawn", None
        heights.append(-rows.mean())
        means.append(run.mean())
    if len(means) < 2 or min(means) == max(means):
        return True, "", None
    rho = spearman(means, heights)
    return rho >= 0.9, f"Spearman {rho:.3f} < 0.9", rho


def check(store, mount):
    from PIL import Image
    root = zarr.open_group(store, mode="r")
    paths = [c[0] for c in cases()] + ["pyramid/0", "pyramid/1", "pyramid/2"]
    for path in paths:
        arr = root[path]
        f = os.path.join(mount, path, "preview.png")
        res = {"path": path, "ok": False, "why": "", "rho": None}
        try:
            size = os.stat(f).st_size
            with open(f, "rb") as fh:
                data = fh.read()
            if len(data) != size:
                res["why"] = f"st_size {size}, read {len(data)} bytes"
            else:
                im = Image.open(f)
                im.load()
                if path.startswith("pyramid/"):
                    arr = root["pyramid/1"]  # every level is drawn from level 1
                if arr.ndim == 1:
                    ok, why, rho = check_chart(arr, im)
                else:
                    ok, why, rho = check_plane(arr, im)
                res.update(ok=bool(ok), why="" if ok else why, rho=rho)
        except Exception as e:  # reported per array
            res["why"] = f"{type(e).__name__}: {e}"
        print(json.dumps(res), flush=True)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3])
