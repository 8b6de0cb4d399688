import json, sys, zarr, numpy as np
d = sys.argv[1]
z = zarr.open_array(d, mode="w", shape=(5,), chunks=(3,), dtype="<U4", fill_value="", compressor=None)
z[:3] = ["ab", "", "wxyz"]
meta = json.load(open(d + "/.zarray"))
meta["fill_value"] = 0
json.dump(meta, open(d + "/.zarray", "w"))
sys.stdout.buffer.write(zarr.open_array(d, mode="r")[...].astype("<U4").tobytes())
