package integration

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// The tests of issue 44: what real programs make of the views.

// northUpProgram writes, with xarray, a v2 group of a field over latitude
// running south to north (as ERA5-like stores and the example's
// temperature do) and over latitude running north to south; with a mount
// given, it reads each preview.png with PIL and checks that the top row
// shows the northernmost latitude (the field is the latitude: the top row
// is the yellow end of viridis, the bottom row the dark blue).
const northUpProgram = `
import sys
import numpy as np, xarray as xr
store = sys.argv[1]
if len(sys.argv) == 2:
    for name, lat in (("south_north", np.linspace(-80, 80, 40)), ("north_south", np.linspace(80, -80, 40))):
        lon = np.arange(0, 360, 5.0)
        field = np.repeat(lat[:, None], len(lon), axis=1).astype("f4")
        ds = xr.Dataset({"t": (("lat", "lon"), field)}, coords={"lat": lat, "lon": lon})
        ds.lat.attrs.update(units="degrees_north", standard_name="latitude")
        ds.to_zarr(store, group=name, mode="a")
    sys.exit(0)
from PIL import Image
mount = sys.argv[2]
bad = 0
for name in ("south_north", "north_south"):
    img = Image.open("%s/%s/t/preview.png" % (mount, name)).convert("RGB")
    w, h = img.size
    top, bottom = img.getpixel((w // 2, 0)), img.getpixel((w // 2, h - 1))
    # viridis: the highest value is yellow (R and G high, B low), the lowest dark blue-purple.
    ok = top[1] > 200 and top[2] < 100 and bottom[1] < 50
    print("%s: %dx%d, top %s, bottom %s: %s" % (name, w, h, top, bottom, "north up" if ok else "NOT north up"))
    bad += not ok
sys.exit(1 if bad else 0)
`

// TestMountPreviewNorthUp: PIL sees preview.png north up whether the
// latitude runs south to north or north to south.
func TestMountPreviewNorthUp(t *testing.T) {
	needFuse(t)
	peertest.NeedPythonModules(t, "import xarray, PIL", "python3-xarray, python3-pil")
	store := filepath.Join(t.TempDir(), "lat.zarr")
	peertest.RunPython(t, northUpProgram, store)
	m := mountStore(t, store)
	out := peertest.RunPython(t, northUpProgram, store, m.dir)
	t.Logf("%s", strings.TrimSpace(string(out)))
}
