//go:build linux

package fs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/zarrfs/zarrfs/internal/logonce"
	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
)

// cacheTimeout is how long the kernel may trust names and attributes
// unless the mount is live: the hierarchy never changes within one mount.
const cacheTimeout = time.Hour

// maxRead is the size of FUSE read replies (the kernel's maximum).
const maxRead = 1 << 20

// Server is a mounted hierarchy being served.
type Server struct {
	srv        *fuse.Server
	mountpoint string
}

// Mount mounts the hierarchy h read-only at mountpoint and serves it in the
// background until it is unmounted. As root it mounts with mount(2)
// directly; other users go through fusermount3.
func Mount(mountpoint string, h *zarr.Hierarchy, cfg Config) (*Server, error) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		return nil, fmt.Errorf("FUSE is not available here (%v): serve the tree instead with `zarrfs serve webdav STORE` or `zarrfs serve nfs STORE`", err)
	}
	if err := CheckMountpoint(mountpoint); err != nil {
		return nil, err
	}
	ctx := context.Background()
	rootNode, err := h.Node(ctx, "")
	if err != nil {
		return nil, fmt.Errorf("root node: %w", err)
	}
	logger := cfg.Logger
	if logger == nil {
		logger = log.Default()
	}
	if cfg.Live > 0 && cfg.Reopen == nil {
		return nil, errors.New("mount: Config.Live needs Config.Reopen")
	}
	raw, opts := newRawFS(h, rootNode, cfg, logger)
	srv, err := fuse.NewServer(raw, mountpoint, opts)
	if err != nil {
		return nil, fmt.Errorf("mount %s: %w", mountpoint, err)
	}
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		return nil, fmt.Errorf("mount %s: %w", mountpoint, err)
	}
	if opts.DirectMount && cfg.ReadaheadKiB > 0 {
		if err := setReadahead(mountpoint, cfg.ReadaheadKiB); err != nil && cfg.Debug {
			logger.Printf("keeping the kernel's read-ahead: %v", err)
		}
	}
	return &Server{srv: srv, mountpoint: mountpoint}, nil
}

// newRawFS returns the file system serving h (whose root node is root) and
// the options to mount it with.
func newRawFS(h *zarr.Hierarchy, root *zarr.Node, cfg Config, logger *log.Logger) (fuse.RawFileSystem, *fuse.MountOptions) {
	m := &mountFS{log: errorLog{once: logonce.Log{Logger: logger}}, mountTime: time.Now(), uid: cfg.UID, gid: cfg.GID}
	m.snaps = view.NewTree(h, cfg.Views, cfg.Live, cfg.Reopen, func(err error) { m.log.errno(err) })
	v := m.snaps.Current()
	timeout := cacheTimeout
	if cfg.Live > 0 {
		timeout = cfg.Live
	}
	opts := &gofs.Options{
		EntryTimeout:    &timeout,
		AttrTimeout:     &timeout,
		NegativeTimeout: &timeout,
		UID:             cfg.UID,
		GID:             cfg.GID,
		RootStableAttr:  &gofs.StableAttr{Ino: rootIno},
		MountOptions: fuse.MountOptions{
			FsName: cfg.FsName,
			Name:   "zarrfs",
			// default_permissions: the kernel checks the modes, which
			// say what zarrfs allows. No FUSE_POSIX_ACL: zarrfs has no
			// ACLs, and its getxattr answers system.posix_acl_* with
			// EOPNOTSUPP (notOurs), which ls -l takes as "no ACLs on this
			// device" and stops asking.
			Options:      []string{"ro", "default_permissions"},
			AllowOther:   cfg.AllowOther,
			MaxWrite:     maxRead,
			MaxReadAhead: maxRead,
			// Replies are slices of decoded chunks in memory, which
			// go-fuse writes with writev: a splice would only add a
			// pipe per reply. (Splicing straight from uncompressed chunk
			// files is a different read path, not built: BENCH.md, Not
			// done.)
			DisableSplice: true,
			DirectMount:   os.Geteuid() == 0,
			MaxBackground: cmp.Or(cfg.MaxBackground, DefaultMaxBackground),
			Debug:         cfg.Debug,
			Logger:        logger,
		},
	}
	raw := gofs.NewNodeFS(newDirNode(m, v, root), opts)
	if cfg.Live == 0 {
		// A live mount opens its directories: their listings must not
		// be cached (see noOpendir).
		raw = &noOpendir{RawFileSystem: raw}
		opts.MountOptions.ExtraCapabilities |= fuse.CAP_NO_OPENDIR_SUPPORT
	}
	return raw, &opts.MountOptions
}

// setReadahead lets the kernel read ahead kib KiB on the mount, so that
// sequential readers get 1 MiB FUSE reads, several in flight: FUSE caps the
// read-ahead it negotiates at 128 KiB, but root may raise it in sysfs
// afterwards.
func setReadahead(mountpoint string, kib int) error {
	var st unix.Stat_t
	if err := unix.Stat(mountpoint, &st); err != nil {
		return err
	}
	bdi := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(st.Dev), unix.Minor(st.Dev))
	return os.WriteFile(bdi, []byte(fmt.Sprint(kib)), 0)
}

// Wait blocks until the file system is unmounted (after a lazy unmount:
// until the last open file is closed).
func (s *Server) Wait() { s.srv.Wait() }

// Unmount unmounts the file system. It fails (EBUSY) while files are open.
func (s *Server) Unmount() error {
	if err := s.srv.Unmount(); err != nil {
		return fmt.Errorf("unmount %s: %w", s.mountpoint, err)
	}
	return nil
}

// Detach unmounts the file system lazily: it disappears from the namespace
// at once, while files already open stay readable; Wait returns after the
// last of them is closed.
func (s *Server) Detach() error { return Unmount(s.mountpoint, true) }

// Unmount unmounts the zarrfs mount at mountpoint: with umount2(2) as root,
// otherwise with fusermount3 -u (or fusermount). lazy detaches the mount
// even while files are open (MNT_DETACH, fusermount3 -u -z).
func Unmount(mountpoint string, lazy bool) error {
	if os.Geteuid() == 0 {
		flags := 0
		if lazy {
			flags = syscall.MNT_DETACH
		}
		err := syscall.Unmount(mountpoint, flags)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, syscall.EINVAL):
			return fmt.Errorf("unmount %s: not a mount point", mountpoint)
		case !errors.Is(err, syscall.EPERM):
			return fmt.Errorf("unmount %s: %w", mountpoint, err)
		}
	}
	bin, err := fusermount()
	if err != nil {
		return fmt.Errorf("unmount %s: %w", mountpoint, err)
	}
	args := []string{"-u"}
	if lazy {
		args = append(args, "-z")
	}
	out, err := exec.Command(bin, append(args, mountpoint)...).CombinedOutput()
	if err != nil {
		msg := strings.TrimSpace(string(out))
		if msg == "" {
			msg = err.Error()
		}
		return fmt.Errorf("unmount %s: %s", mountpoint, msg)
	}
	return nil
}

// fusermount finds fusermount3, or fusermount.
func fusermount() (string, error) {
	for _, name := range []string{"fusermount3", "fusermount"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("neither fusermount3 nor fusermount found in PATH")
}

// StaleMountError reports a mountpoint whose FUSE server has gone away.
type StaleMountError struct {
	Mountpoint string
}

func (e *StaleMountError) Error() string {
	return fmt.Sprintf("%s is a stale FUSE mount (transport endpoint is not connected); clear it with `fusermount3 -u %s`",
		e.Mountpoint, e.Mountpoint)
}

// Unwrap makes a StaleMountError match syscall.ENOTCONN.
func (e *StaleMountError) Unwrap() error { return syscall.ENOTCONN }

// CheckMountpoint checks that mountpoint is a directory one can mount on; a
// stale mount is a *StaleMountError naming the command that clears it. The
// file system is asked for its statistics (statfs), which no cache
// answers: the kernel answers stat on a stale FUSE mount from its attribute
// cache, and lists a directory listed before from its cache of listings.
func CheckMountpoint(mountpoint string) error {
	st, err := os.Stat(mountpoint)
	if err == nil && !st.IsDir() {
		return fmt.Errorf("mountpoint %s: not a directory", mountpoint)
	}
	if err == nil {
		var stats unix.Statfs_t
		if err = unix.Statfs(mountpoint, &stats); err != nil {
			err = &os.PathError{Op: "statfs", Path: mountpoint, Err: err}
		}
	}
	switch {
	case errors.Is(err, syscall.ENOTCONN):
		return &StaleMountError{Mountpoint: mountpoint}
	case err != nil:
		return fmt.Errorf("mountpoint: %w", err)
	}
	return nil
}
