package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// previewsScript is the oracle of the previews: zarr-python writes the
// arrays, PIL and scipy check the mount's preview.png files.
func previewsScript() string {
	return pyScript("previews.py")
}

// needPIL skips (or fails) t unless /usr/bin/python3 has PIL and scipy.
func needPIL(t *testing.T) {
	t.Helper()
	peertest.NeedPython(t)
	peertest.NeedPythonModules(t, "import PIL, scipy", "python3-pil, python3-scipy")
}

// TestMountPreviews: zarr-python writes arrays of every numeric type, of
// rank 1 to 5, with NaN and ±Inf, constant, of one element, larger than 512
// pixels, an OME-Zarr pyramid and an array with a corrupt chunk. Through a
// mount, in a subprocess, each preview.png is as long as stat says, PIL
// opens it, and its pixels follow the elements (previews.py check); the
// corrupt chunk fails the read with EIO. `zarrfs preview` writes the same
// bytes; with a budget under level 0 of the pyramid, level 0 still has its
// preview, and an array over the budget outside a pyramid has none;
// --previews=false shows none.
func TestMountPreviews(t *testing.T) {
	needFuse(t)
	needPIL(t)
	store := filepath.Join(t.TempDir(), "previews.zarr")
	run(t, peertest.Python, previewsScript(), "write", store)
	m := mountStore(t, store)

	out := run(t, peertest.Python, previewsScript(), "check", store, m.dir)
	sc := bufio.NewScanner(bytes.NewReader(out))
	checked := 0
	for sc.Scan() {
		var r struct {
			Path string   `json:"path"`
			OK   bool     `json:"ok"`
			Why  string   `json:"why"`
			Rho  *float64 `json:"rho"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("previews.py printed %q: %v", sc.Text(), err)
		}
		checked++
		if !r.OK {
			t.Errorf("%s/preview.png: %s", r.Path, r.Why)
		}
	}
	if checked < 50 {
		t.Fatalf("previews.py checked only %d previews", checked)
	}

	read := func(dir, path string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, path, "preview.png"))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, path := range []string{"types/c8", "ranks/i2_5d", "special/nan_inf", "big/long", "pyramid/0"} {
		sameBytes(t, "zarrfs preview "+path, mustZarrfs(t, "preview", store, path), read(m.dir, path))
	}

	// A corrupt chunk under the plane: EIO on the preview's read, as on
	// data's; its size is still known.
	corrupt := filepath.Join(m.dir, "corrupt", "preview.png")
	if fi, err := os.Stat(corrupt); err != nil || fi.Size() == 0 {
		t.Errorf("stat corrupt/preview.png: %v", err)
	}
	if _, err := os.ReadFile(corrupt); !errors.Is(err, syscall.EIO) {
		t.Errorf("reading corrupt/preview.png: %v, want EIO", err)
	}

	small := mountStore(t, store, "--preview-budget", "2MiB")
	sameBytes(t, "pyramid/0/preview.png under a 2 MiB budget", read(small.dir, "pyramid/0"), read(m.dir, "pyramid/0"))
	if _, err := os.Stat(filepath.Join(small.dir, "over_budget", "preview.png")); !os.IsNotExist(err) {
		t.Errorf("over_budget/preview.png under a 2 MiB budget: %v, want it absent", err)
	}
	if _, err := os.Stat(filepath.Join(m.dir, "over_budget", "preview.png")); err != nil {
		t.Errorf("over_budget/preview.png under the default budget: %v", err)
	}

	off := mountStore(t, store, "--previews=false")
	if names := lsNames(t, filepath.Join(off.dir, "types", "f4")); slices.Contains(names, "preview.png") {
		t.Errorf("--previews=false shows %v", names)
	}
}

// TestInfoTxtChildren: a group's info.txt lists its children, and `zarrfs
// info` prints the same.
func TestInfoTxtChildren(t *testing.T) {
	needFuse(t)
	store := filepath.Join(t.TempDir(), "example")
	mustZarrfs(t, "example", store)
	m := mountStore(t, store)
	for _, path := range []string{"", "codecs", "temperature"} {
		b, err := os.ReadFile(filepath.Join(m.dir, path, "info.txt"))
		if err != nil {
			t.Fatal(err)
		}
		sameBytes(t, "zarrfs info "+path, mustZarrfs(t, "info", store, "/"+path), b)
		if want := path != "temperature"; bytes.Contains(b, []byte("\nchildren:\n")) != want {
			t.Errorf("%s/info.txt: lists children %v, want %v:\n%s", path, !want, want, b)
		}
	}
}
