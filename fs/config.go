package fs

import (
	"context"
	"log"
	"time"

	"github.com/zarrfs/zarrfs/view"
	"github.com/zarrfs/zarrfs/zarr"
)

// Config configures a mount.
type Config struct {
	// FsName names the store in the mount table ("dir /data/x.zarr").
	FsName string
	// AllowOther lets users other than the one mounting read the mount.
	AllowOther bool
	// UID and GID own every file and directory.
	UID, GID uint32
	// Debug logs every FUSE request to Logger.
	Debug bool
	// Logger receives one line per distinct engine error (and the FUSE
	// debug log); nil means log.Default().
	Logger *log.Logger
	// ReadaheadKiB, when positive, is the kernel read-ahead window (KiB)
	// set for the mount's device when running as root; 0 leaves the
	// kernel's (FUSE negotiates at most 128 KiB).
	ReadaheadKiB int
	// MaxBackground is how many asynchronous requests (read-ahead) the
	// kernel keeps in flight; 0 means DefaultMaxBackground.
	MaxBackground int
	// Live, when positive, is how long what the mount shows may be
	// trusted for a store that changes: after it, the hierarchy is opened
	// again with Reopen (on the next request), and the kernel keeps names,
	// attributes and listings no longer than this. Files open before
	// keep reading the array as it was when they were opened. 0: the
	// store never changes, everything is cached for the mount's life.
	Live time.Duration
	// Reopen opens the hierarchy again; required when Live is positive.
	// prev is the hierarchy the new one replaces (zarr.Options.Previous).
	Reopen func(ctx context.Context, prev *zarr.Hierarchy) (*zarr.Hierarchy, error)
	// Views chooses the optional files the mount shows.
	Views view.Config
}

// DefaultReadaheadKiB is the kernel read-ahead window the mount command
// sets by default: measured with make bench (BENCH.md), a window of several
// 1 MiB replies keeps enough reads in flight for the engine to decode
// chunks on every core.
const DefaultReadaheadKiB = 4096

// DefaultMaxBackground is the default number of asynchronous FUSE requests
// in flight (go-fuse's own default is 12).
const DefaultMaxBackground = 64
