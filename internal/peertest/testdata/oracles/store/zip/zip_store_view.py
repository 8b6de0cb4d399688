# zip_store_view.py writes a hierarchy with zarr-python's ZipStore into
# argv[1] (compression argv[2]), adds a duplicate key and members with
# unsafe names through zipfile, and prints python's view of the archive:
# {key: base64 value} for every key ZipStore shows.
import base64, json, sys, warnings, zipfile
import numpy as np, zarr, numcodecs
warnings.simplefilter("ignore")
path = sys.argv[1]
comp = {"stored": zipfile.ZIP_STORED, "deflated": zipfile.ZIP_DEFLATED}[sys.argv[2]]
st = zarr.ZipStore(path, mode="w", compression=comp)
root = zarr.group(store=st)
root.attrs["title"] = "zip test"
a = root.create_dataset("temp", shape=(40, 30), chunks=(16, 16), dtype="<f8",
                        compressor=numcodecs.Zlib(level=3), fill_value=-1.5)
a[:] = np.arange(1200, dtype="<f8").reshape(40, 30) / 7
b = root.create_group("sub group").create_dataset("ü", shape=(1000,), chunks=(300,), dtype="<i2", compressor=None)
b[:] = np.arange(1000, dtype="<i2") * 3
st["dup"] = b"first"
st["dup"] = b"second, the one that counts"
st.zf.writestr("../../escape", b"x")
st.zf.writestr("/etc/passwd", b"x")
st.zf.writestr("a\\b", b"x")
st.zf.writestr("./dot", b"x")
st.zf.writestr("folder//double", b"x")
st.close()
ro = zarr.ZipStore(path, mode="r")
print(json.dumps({k: base64.b64encode(ro[k]).decode() for k in ro.keys()}))
ro.close()
