package dir

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestFstatAgreesWithOs checks the file information the openat2 path builds
// from fstat(2) against package os's for each kind of file a store meets.
func TestFstatAgreesWithOs(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(root, "file"), []byte("12345"), 0o640))
	must(os.Mkdir(filepath.Join(root, "dir"), 0o751))
	must(syscall.Mkfifo(filepath.Join(root, "fifo"), 0o600))
	must(os.Symlink("file", filepath.Join(root, "link")))
	must(os.Chmod(filepath.Join(root, "dir"), 0o751|os.ModeSticky))
	b, err := openBeneath(root)
	must(err)
	defer b.close()
	for _, name := range []string{"file", "dir", "fifo", "link"} {
		fd, ok, err := b.openFd(name, unix.O_PATH)
		if !ok {
			t.Skip("openat2 is unavailable")
		}
		must(err)
		got, err := fstat(fd, name)
		unix.Close(fd)
		must(err)
		want, err := os.Stat(filepath.Join(root, name))
		must(err)
		if got.Name() != want.Name() || got.Mode() != want.Mode() || got.Size() != want.Size() ||
			!got.ModTime().Equal(want.ModTime()) || got.IsDir() != want.IsDir() {
			t.Errorf("%s: fstat gives %s %v %d %v, os.Stat %s %v %d %v", name,
				got.Name(), got.Mode(), got.Size(), got.ModTime(), want.Name(), want.Mode(), want.Size(), want.ModTime())
		}
		if !sameFile(got, want) || !sameFile(want, got) {
			t.Errorf("%s: sameFile(fstat, os.Stat) is false", name)
		}
	}
	file, err := os.Stat(filepath.Join(root, "file"))
	must(err)
	dir, err := os.Stat(filepath.Join(root, "dir"))
	must(err)
	if sameFile(file, dir) {
		t.Error("sameFile(file, dir) is true")
	}
}
