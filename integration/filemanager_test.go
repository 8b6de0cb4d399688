package integration

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// pcmanfmConf opens pcmanfm in thumbnail view with the directory tree in
// its side pane. libfm's own settings stay Debian's (/etc/xdg/libfm:
// thumbnail_local=1, thumbnail_max=2048 KiB): a FUSE mount counts as
// local, and the largest preview is about 260 KiB.
const pcmanfmConf = `[volume]
mount_on_startup=0
mount_removable=0
autorun=0

[ui]
win_width=1000
win_height=600
splitter_pos=220
side_pane_mode=2
view_mode=2
show_hidden=0
sort_type=0
sort_by=2
`

// TestFileManagerThumbnails mounts the example hierarchy, opens the array
// folder image/ in pcmanfm under Xvfb and takes screenshots until the
// icon of preview.png shows the preview's own colours (the generic icons
// are grey, white and blue): a thumbnail of at least 64 × 64 pixels in at
// least 20 of its colours. With ZARRFS_SCREENSHOT=FILE (make screenshot)
// the screenshot is written to FILE, for the README.
func TestFileManagerThumbnails(t *testing.T) {
	needFuse(t)
	peertest.NeedCommands(t, "xvfb, pcmanfm, imagemagick", "Xvfb", "pcmanfm", "import")
	dir := t.TempDir()
	shotFile := os.Getenv("ZARRFS_SCREENSHOT")
	if shotFile != "" {
		// The address bar shows the path: a tidy one for the README.
		dir = filepath.Join(os.TempDir(), "zarrfs-screenshot")
		os.RemoveAll(dir)
		t.Cleanup(func() { os.RemoveAll(dir) }) // runs last, after the unmount
	}
	store, home := filepath.Join(dir, "store"), filepath.Join(dir, "user")
	mnt := filepath.Join(home, "example")
	conf := filepath.Join(home, ".config", "pcmanfm", "default")
	for _, d := range []string{mnt, conf} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(conf, "pcmanfm.conf"), []byte(pcmanfmConf), 0o644); err != nil {
		t.Fatal(err)
	}
	mustZarrfs(t, "example", store)
	startMount(t, mnt, "mount", store, mnt)
	preview, err := os.ReadFile(filepath.Join(mnt, "image", "preview.png"))
	if err != nil {
		t.Fatal(err)
	}
	colours := previewColours(t, preview)

	display := startXvfb(t)
	env := append(os.Environ(), "DISPLAY="+display, "HOME="+home,
		"XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_CACHE_HOME="+filepath.Join(home, ".cache"),
		"XDG_DATA_HOME="+filepath.Join(home, ".local", "share"))
	fm := exec.Command("pcmanfm", "--no-desktop", filepath.Join(mnt, "image"))
	fm.Env = env
	var fmLog bytes.Buffer
	fm.Stdout, fm.Stderr = &fmLog, &fmLog
	if err := fm.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		fm.Process.Signal(syscall.SIGTERM)
		fm.Wait()
	})

	var shot []byte
	var why string
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(500 * time.Millisecond) {
		cmd := exec.Command("import", "-window", "root", "png:-")
		cmd.Env = env
		if shot, err = cmd.Output(); err != nil {
			why = "import: " + err.Error()
			continue
		}
		if why = thumbnailShown(shot, colours); why == "" {
			break
		}
	}
	if why != "" {
		last := filepath.Join(os.TempDir(), "TestFileManagerThumbnails.png")
		os.WriteFile(last, shot, 0o644)
		t.Fatalf("no thumbnail of image/preview.png after 30 s: %s (the last screenshot: %s)\npcmanfm: %s", why, last, fmLog.String())
	}
	if shotFile != "" {
		// The window's top 420 rows: the tree ends there, the folder's
		// icons higher.
		img, err := png.Decode(bytes.NewReader(shot))
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := png.Encode(&b, img.(interface {
			SubImage(image.Rectangle) image.Image
		}).SubImage(image.Rect(0, 0, 1000, 420))); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(shotFile, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot written to %s", shotFile)
	}
}

// previewColours returns the colours of a preview's pixels.
func previewColours(t *testing.T, b []byte) map[[3]uint8]bool {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	colours := map[[3]uint8]bool{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, ca := img.At(x, y).RGBA()
			if ca == 0xffff {
				colours[[3]uint8{uint8(cr >> 8), uint8(cg >> 8), uint8(cb >> 8)}] = true
			}
		}
	}
	return colours
}

// thumbnailShown returns "" when the screenshot shot has a region of at
// least 64 × 64 pixels holding at least 20 of the preview's colours
// (within 6 per channel: the thumbnail is scaled), else what it found.
func thumbnailShown(shot []byte, colours map[[3]uint8]bool) string {
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		return "screenshot: " + err.Error()
	}
	near := func(c [3]uint8) ([3]uint8, bool) {
		for p := range colours {
			if absDiff(p[0], c[0]) <= 6 && absDiff(p[1], c[1]) <= 6 && absDiff(p[2], c[2]) <= 6 {
				return p, true
			}
		}
		return [3]uint8{}, false
	}
	matched := map[[3]uint8]bool{}
	box := image.Rectangle{}
	cache := map[[3]uint8]bool{}
	r := img.Bounds()
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			cr, cg, cb, _ := img.At(x, y).RGBA()
			c := [3]uint8{uint8(cr >> 8), uint8(cg >> 8), uint8(cb >> 8)}
			if c[0] == c[1] && c[1] == c[2] {
				continue // grey: no viridis colour is
			}
			ok, seen := cache[c]
			if !seen {
				var p [3]uint8
				p, ok = near(c)
				cache[c] = ok
				if ok {
					matched[p] = true
				}
			}
			if ok {
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	if len(matched) < 20 || box.Dx() < 64 || box.Dy() < 64 {
		return fmt.Sprintf("%d of the preview's colours (want ≥ 20) in a box of %d × %d pixels (want ≥ 64 × 64)", len(matched), box.Dx(), box.Dy())
	}
	return ""
}

func absDiff(a, b uint8) uint8 {
	if a > b {
		return a - b
	}
	return b - a
}

// startXvfb starts an X server on a free display and returns its name
// (":N"); it is stopped in t.Cleanup.
func startXvfb(t *testing.T) string {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	x := exec.Command("Xvfb", "-displayfd", "3", "-screen", "0", "1000x600x24", "-nolisten", "tcp")
	x.ExtraFiles = []*os.File{w}
	var xLog bytes.Buffer
	x.Stderr = &xLog
	if err := x.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() {
		x.Process.Signal(syscall.SIGTERM)
		x.Wait()
	})
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case n := <-line:
		if n == "" {
			t.Fatalf("Xvfb told no display: %s", xLog.String())
		}
		return ":" + n
	case <-time.After(20 * time.Second):
		t.Fatalf("Xvfb: no display after 20 s: %s", xLog.String())
	}
	return ""
}
