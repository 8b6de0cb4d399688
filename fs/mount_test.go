//go:build linux

package fs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
	"github.com/zarrfs/zarrfs/zarr/example"
)

// exampleDir writes the example hierarchy into a directory.
func exampleDir(t *testing.T) string {
	t.Helper()
	path := t.TempDir()
	st, err := dir.Open(path, dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := example.Write(context.Background(), st); err != nil {
		t.Fatal(err)
	}
	return path
}

// mountDir mounts the hierarchy in the directory path in-process. Only
// listing, stat and xattr calls may be made on the mount from this
// process: reads go through a subprocess in integration/.
func mountDir(t *testing.T, path string) (string, *zarr.Hierarchy) {
	t.Helper()
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse: FUSE is unavailable here")
	}
	st, err := dir.Open(path, dir.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	h, err := zarr.Open(context.Background(), st, zarr.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mnt := t.TempDir()
	srv, err := Mount(mnt, h, Config{FsName: "example", UID: 1234, GID: 5678, Logger: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Skipf("cannot mount FUSE here: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	return mnt, h
}

// mountExample mounts the example's v3 hierarchy.
func mountExample(t *testing.T) (string, *zarr.Hierarchy) {
	t.Helper()
	return mountDir(t, exampleDir(t))
}

func TestMountListing(t *testing.T) {
	mnt, h := mountExample(t)
	ctx := context.Background()

	rootNames := names(t, mnt)
	for _, want := range []string{"zarr.json", "info.txt", "temperature", "image", "gravity", "sparse", "lat", "codecs"} {
		if !slices.Contains(rootNames, want) {
			t.Errorf("root lists %v, missing %q", rootNames, want)
		}
	}
	if got := names(t, filepath.Join(mnt, "temperature")); !slices.Equal(got, []string{"data", "data.hdr", "data.nhdr", "data.npy", "data.npy.hdr", "info.txt", "zarr.json"}) {
		t.Errorf("temperature lists %v", got)
	}
	for _, d := range []string{"", "temperature", "sparse", "codecs/sharding"} {
		for _, n := range names(t, filepath.Join(mnt, d)) {
			if n == "c" || n == "0" || n == "0.0" || n[0] == '_' && len(n) > 1 && n[1] == '_' {
				t.Errorf("%s lists the chunk key or hidden name %q", d, n)
			}
		}
	}

	// Sizes: data is the array's content, data.npy the same behind a header.
	temp, err := h.Node(ctx, "temperature")
	if err != nil {
		t.Fatal(err)
	}
	want := int64(example.NumTimes * example.NumLats * example.NumLons * 4)
	fi := stat(t, filepath.Join(mnt, "temperature", "data"))
	if fi.Size() != want || temp.Array.Size() != want {
		t.Errorf("data size %d (Array.Size %d), want %d", fi.Size(), temp.Array.Size(), want)
	}
	if fi.Mode() != 0o444 {
		t.Errorf("data mode %v, want -r--r--r--", fi.Mode())
	}
	sys := fi.Sys().(*syscall.Stat_t)
	if sys.Uid != 1234 || sys.Gid != 5678 || sys.Nlink != 1 {
		t.Errorf("data uid %d gid %d nlink %d, want 1234 5678 1", sys.Uid, sys.Gid, sys.Nlink)
	}
	hdr := view.NpyHeader("<f4", []int64{example.NumTimes, example.NumLats, example.NumLons})
	if got := stat(t, filepath.Join(mnt, "temperature", "data.npy")).Size(); got != want+int64(len(hdr)) {
		t.Errorf("data.npy size %d, want %d", got, want+int64(len(hdr)))
	}
	var doc []byte
	for _, d := range temp.Documents {
		if d.Name == "zarr.json" {
			doc = d.Data
		}
	}
	if got := stat(t, filepath.Join(mnt, "temperature", "zarr.json")).Size(); got != int64(len(doc)) || len(doc) == 0 {
		t.Errorf("zarr.json size %d, want %d", got, len(doc))
	}
	if got := stat(t, filepath.Join(mnt, "gravity", "data")).Size(); got != 8 {
		t.Errorf("0-d float64 data size %d, want 8", got)
	}

	// Directories: 0555, stable inode numbers, link counts.
	d := stat(t, filepath.Join(mnt, "codecs"))
	if d.Mode() != os.ModeDir|0o555 {
		t.Errorf("codecs mode %v, want dr-xr-xr-x", d.Mode())
	}
	if n := d.Sys().(*syscall.Stat_t).Nlink; n != 1 {
		t.Errorf("group nlink %d, want 1 (not counted)", n)
	}
	if n := stat(t, filepath.Join(mnt, "codecs", "gzip")).Sys().(*syscall.Stat_t).Nlink; n != 2 {
		t.Errorf("array directory nlink %d, want 2", n)
	}
	// Block sizes: 1 MiB for files (the size of FUSE replies, for cat's
	// reads), 32 KiB for directories (glibc's getdents64 buffer, which the
	// kernel allocates for each READDIRPLUS).
	for p, want := range map[string]int64{"": dirBlockSize, "codecs/gzip": dirBlockSize, "image/data": blockSize, "image/zarr.json": blockSize} {
		if got := stat(t, filepath.Join(mnt, p)).Sys().(*syscall.Stat_t).Blksize; got != want {
			t.Errorf("%s: st_blksize %d, want %d", p, got, want)
		}
	}
	ino1 := stat(t, filepath.Join(mnt, "image", "data")).Sys().(*syscall.Stat_t).Ino
	ino2 := stat(t, filepath.Join(mnt, "image", "data.npy")).Sys().(*syscall.Stat_t).Ino
	if ino1 != ino("image", "data") || ino1 == ino2 {
		t.Errorf("inode numbers %d, %d are not the stable hashes", ino1, ino2)
	}
}

func TestMountStatfs(t *testing.T) {
	mnt, _ := mountExample(t)
	for _, p := range []string{mnt, filepath.Join(mnt, "temperature", "data")} {
		var st syscall.Statfs_t
		if err := syscall.Statfs(p, &st); err != nil {
			t.Fatal(err)
		}
		if st.Namelen != 255 || st.Bsize != blockSize || st.Bavail != 0 {
			t.Errorf("statfs %s: namelen %d, bsize %d, bavail %d", p, st.Namelen, st.Bsize, st.Bavail)
		}
	}
}

func TestMountXattrs(t *testing.T) {
	mnt, _ := mountExample(t)
	for _, c := range []struct{ file, attr, want string }{
		{"temperature", "user.zarr.shape", "24,90,180"},
		{"temperature/data", "user.zarr.dtype", "<f4"},
		{"temperature/data", "user.zarr.dimension_names", "time,lat,lon"},
		{"temperature/data", "user.zarr.chunks", "6,45,90"},
		{"gravity/data", "user.zarr.shape", ""},
		{"", "user.zarr.format", "3"},
		{"sparse/data", "user.zarr.fill_value", "255"},
	} {
		buf := make([]byte, 256)
		n, err := syscall.Getxattr(filepath.Join(mnt, c.file), c.attr, buf)
		if err != nil {
			t.Errorf("getxattr %s %s: %v", c.file, c.attr, err)
			continue
		}
		if got := string(buf[:n]); got != c.want {
			t.Errorf("%s %s = %q, want %q", c.file, c.attr, got, c.want)
		}
	}
	// Other user.* names have nothing; other namespaces (ls -l asks for
	// these of every file) are not supported.
	for _, file := range []string{"", "temperature", "temperature/data", "temperature/data.npy", "temperature/info.txt"} {
		for _, c := range []struct {
			attr string
			want syscall.Errno
		}{
			{"security.selinux", syscall.EOPNOTSUPP},
			{"system.posix_acl_access", syscall.EOPNOTSUPP},
			{"user.zarr.none", syscall.ENODATA},
			{"user.other", syscall.ENODATA},
		} {
			if _, err := syscall.Getxattr(filepath.Join(mnt, file), c.attr, make([]byte, 256)); err != c.want {
				t.Errorf("getxattr %q %s: %v, want %v", file, c.attr, err, c.want)
			}
		}
	}
	buf := make([]byte, 1024)
	n, err := syscall.Listxattr(filepath.Join(mnt, "temperature", "data"), buf)
	if err != nil {
		t.Fatal(err)
	}
	if got := bytes.Count(buf[:n], []byte{0}); got != 7 {
		t.Errorf("listxattr gives %d names, want 7: %q", got, buf[:n])
	}
}

func TestMountV2(t *testing.T) {
	mnt, _ := mountDir(t, filepath.Join(exampleDir(t), example.V2Root))
	if got := names(t, filepath.Join(mnt, "precipitation")); !slices.Equal(got, []string{".zarray", ".zattrs", "data", "data.hdr", "data.nhdr", "data.npy", "data.npy.hdr", "info.txt"}) {
		t.Errorf("precipitation lists %v", got)
	}
	if got := names(t, filepath.Join(mnt, "counts")); !slices.Equal(got, []string{".zarray", ".zattrs", "data", "data.hdr", "data.nhdr", "data.npy", "data.npy.hdr", "info.txt"}) {
		t.Errorf("counts (\"/\" chunk keys) lists %v", got)
	}
	if got := stat(t, filepath.Join(mnt, "precipitation", "data")).Size(); got != 12*30*60*8 {
		t.Errorf("precipitation data size %d", got)
	}
	for _, c := range []struct{ file, attr, want string }{
		{"counts/data", "user.zarr.dtype", "<i4"},
		{"counts", "user.zarr.format", "2"},
		{"", "user.zarr.format", "2"},
		{"precipitation/data.npy", "user.zarr.dimension_names", "month,lat,lon"},
	} {
		buf := make([]byte, 256)
		n, err := syscall.Getxattr(filepath.Join(mnt, c.file), c.attr, buf)
		if err != nil || string(buf[:n]) != c.want {
			t.Errorf("%s %s = %q, %v; want %q", c.file, c.attr, buf[:max(n, 0)], err, c.want)
		}
	}
}

func TestMountReadOnly(t *testing.T) {
	mnt, _ := mountExample(t)
	for name, op := range map[string]func() error{
		"mkdir":  func() error { return os.Mkdir(filepath.Join(mnt, "new"), 0o755) },
		"create": func() error { return os.WriteFile(filepath.Join(mnt, "new.txt"), nil, 0o644) },
		"open for writing": func() error {
			f, err := os.OpenFile(filepath.Join(mnt, "temperature", "data"), os.O_WRONLY, 0)
			if err == nil {
				f.Close()
			}
			return err
		},
		"truncate": func() error { return os.Truncate(filepath.Join(mnt, "temperature", "data"), 0) },
		"rename":   func() error { return os.Rename(filepath.Join(mnt, "image"), filepath.Join(mnt, "image2")) },
		"unlink":   func() error { return os.Remove(filepath.Join(mnt, "temperature", "zarr.json")) },
		"rmdir":    func() error { return syscall.Rmdir(filepath.Join(mnt, "codecs")) },
		"chmod":    func() error { return os.Chmod(filepath.Join(mnt, "temperature", "data"), 0o644) },
		"setxattr": func() error {
			return syscall.Setxattr(filepath.Join(mnt, "temperature", "data"), "user.zarr.shape", []byte("1"), 0)
		},
		"removexattr": func() error { return syscall.Removexattr(filepath.Join(mnt, "temperature"), "user.zarr.shape") },
	} {
		if err := op(); !errors.Is(err, syscall.EROFS) {
			t.Errorf("%s: %v, want EROFS", name, err)
		}
	}
}

// TestMountStale aborts the FUSE connection of a mount, as the death of its
// server would, and checks that the mountpoint is then reported stale.
func TestMountStale(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("aborting a FUSE connection needs root")
	}
	mnt, _ := mountDir(t, exampleDir(t))
	var st unix.Stat_t
	if err := unix.Stat(mnt, &st); err != nil {
		t.Fatal(err)
	}
	abort := fmt.Sprintf("/sys/fs/fuse/connections/%d/abort", unix.Minor(st.Dev))
	if err := os.WriteFile(abort, []byte("1"), 0); err != nil {
		t.Skipf("cannot abort the connection: %v", err)
	}
	err := CheckMountpoint(mnt)
	var stale *StaleMountError
	if !errors.As(err, &stale) || !strings.Contains(err.Error(), "fusermount3 -u "+mnt) {
		t.Errorf("CheckMountpoint on an aborted mount: %v", err)
	}
	if _, err := Mount(mnt, nil, Config{}); !errors.As(err, &stale) {
		t.Errorf("Mount on an aborted mount: %v, want a StaleMountError", err)
	}
}

func TestCheckMountpoint(t *testing.T) {
	if err := CheckMountpoint(t.TempDir()); err != nil {
		t.Errorf("empty directory: %v", err)
	}
	f := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(f, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := CheckMountpoint(f); err == nil {
		t.Error("a regular file is accepted as a mountpoint")
	}
	if err := CheckMountpoint(filepath.Join(t.TempDir(), "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing directory: %v", err)
	}
	err := error(&StaleMountError{Mountpoint: "/mnt/x"})
	if !errors.Is(err, syscall.ENOTCONN) || !strings.Contains(err.Error(), "fusermount3 -u /mnt/x") {
		t.Errorf("stale mount error %q does not name the command that clears it", err)
	}
}

func names(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var ns []string
	for _, e := range es {
		ns = append(ns, e.Name())
	}
	return ns
}

func stat(t *testing.T, p string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

// TestMountRootArray mounts a store whose root is an array: the mount
// itself then looks like an array's directory.
func TestMountRootArray(t *testing.T) {
	path := t.TempDir()
	st, err := dir.Open(path, dir.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	a, err := zarr.CreateArray(ctx, st, "", zarr.ArrayMeta{
		Format: zarr.FormatV2, Shape: []int64{3, 4}, ChunkShape: []int64{2, 2}, DataType: "<u2", FillValue: 0,
	})
	if err == nil {
		err = a.WriteRegion(ctx, []int64{0, 0}, []int64{3, 4}, make([]byte, 24))
	}
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	mnt, _ := mountDir(t, path)
	if got := names(t, mnt); !slices.Equal(got, []string{".zarray", ".zattrs", "data", "data.hdr", "data.nhdr", "data.npy", "data.npy.hdr", "info.txt"}) &&
		!slices.Equal(got, []string{".zarray", "data", "data.hdr", "data.nhdr", "data.npy", "data.npy.hdr", "info.txt"}) {
		t.Errorf("root array lists %v", got)
	}
	if got := stat(t, filepath.Join(mnt, "data")).Size(); got != 24 {
		t.Errorf("data size %d, want 24", got)
	}
	buf := make([]byte, 64)
	n, err := syscall.Getxattr(mnt, "user.zarr.shape", buf)
	if err != nil || string(buf[:n]) != "3,4" {
		t.Errorf("user.zarr.shape on the mount = %q, %v", buf[:max(n, 0)], err)
	}
}

// TestMountLive changes a directory store under a live mount (TTL 100 ms)
// while readers list and stat it from several goroutines (under -race:
// the renewal of views): once the TTL has passed the mount shows the new
// shape, the new child and not the removed one.
func TestMountLive(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		t.Skip("no /dev/fuse: FUSE is unavailable here")
	}
	root := t.TempDir()
	array := func(n int) string {
		return fmt.Sprintf(`{"zarr_format":3,"node_type":"array","shape":[%d],"data_type":"uint8",`+
			`"chunk_grid":{"name":"regular","configuration":{"chunk_shape":[4]}},`+
			`"chunk_key_encoding":{"name":"default"},"fill_value":7,"codecs":[{"name":"bytes"}]}`, n)
	}
	write := func(name, content string) {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("zarr.json", `{"zarr_format":3,"node_type":"group"}`)
	write("x/zarr.json", array(4))
	write("old/zarr.json", array(1))
	st, err := dir.Open(root, dir.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	open := func(ctx context.Context, prev *zarr.Hierarchy) (*zarr.Hierarchy, error) {
		return zarr.Open(ctx, st, zarr.Options{Live: true, Previous: prev})
	}
	h, err := open(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	mnt := t.TempDir()
	srv, err := Mount(mnt, h, Config{Logger: log.New(io.Discard, "", 0), Live: 100 * time.Millisecond, Reopen: open})
	if err != nil {
		t.Skipf("cannot mount FUSE here: %v", err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	if fi := stat(t, filepath.Join(mnt, "x", "data")); fi.Size() != 4 {
		t.Fatalf("x/data: %d bytes, want 4", fi.Size())
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				os.ReadDir(mnt)
				os.Stat(filepath.Join(mnt, "x", "data"))
				os.ReadDir(filepath.Join(mnt, "x"))
			}
		})
	}
	write("x/zarr.json", array(10))
	write("new/zarr.json", array(2))
	if err := os.RemoveAll(filepath.Join(root, "old")); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	close(stop)
	wg.Wait()
	time.Sleep(150 * time.Millisecond)
	if fi := stat(t, filepath.Join(mnt, "x", "data")); fi.Size() != 10 {
		t.Errorf("x/data after the change: %d bytes, want 10", fi.Size())
	}
	if got := strings.Join(names(t, mnt), " "); got != "dataset.nc info.txt new x zarr.json" {
		t.Errorf("root lists %q after the change", got)
	}
	if _, err := os.Stat(filepath.Join(mnt, "old")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("stat of the removed node: %v, want ENOENT", err)
	}
}
