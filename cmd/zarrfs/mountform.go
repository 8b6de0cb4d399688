package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// mountSpec is what the mount(8) form and `zarrfs mount` are told: the
// mount and store flags, the -o options that set them, and whether to
// detach.
type mountSpec struct {
	mf mountFlags
	sf *storeFlags
	// optionFlags are the flags an -o option may set: every mount and
	// store flag, its dashes written as underscores (cache_size=2GiB).
	optionFlags *pflag.FlagSet
	options     []string // the -o arguments
	daemon      bool
	// rw is set when -o says rw, as mount(8) does whenever ro is absent:
	// the mount is read-only all the same, and run says so once.
	rw bool
}

// run mounts STORE at mountpoint and serves it: in the foreground, or, for
// a daemon, in a child process that the caller leaves serving once the
// mount answers.
func (m *mountSpec) run(ctx context.Context, e *env, spec, mountpoint string) error {
	if err := m.applyOptions(); err != nil {
		return err
	}
	if m.rw && os.Getenv(daemonEnv) == "" {
		// Once, from the caller (not again from a daemon's child).
		fmt.Fprintf(e.stderr, "zarrfs: %s is read-only: mounting read-only (option rw)\n", spec)
	}
	var ready *os.File
	if m.daemon {
		if os.Getenv(daemonEnv) == "" {
			return startDaemon(e)
		}
		ready = os.NewFile(3, "ready")
		os.Unsetenv(daemonEnv)
		// A caller gone before the mount answers closes the pipes: the
		// writes to them must fail (and the mount be undone), not kill
		// the daemon with SIGPIPE while it is mounted.
		signal.Ignore(syscall.SIGPIPE)
	}
	logger, closeLog, logFile, noLog, err := m.logger(e, ready != nil)
	if err != nil {
		return err
	}
	defer closeLog()
	if abs, err := filepath.Abs(mountpoint); err == nil {
		mountpoint = abs
	}
	// notMounted fails a mount that never answered. A daemon says why in
	// its log as well: its caller, to whom the error goes, may be gone.
	notMounted := func(err error) error {
		if ready != nil {
			logger.Printf("did not mount %s at %s: %v", spec, mountpoint, err)
		}
		return err
	}
	o, e, err := openServed(ctx, e, spec, m.sf, &m.mf, logger)
	if err != nil {
		return notMounted(err)
	}
	defer o.close()
	srv, err := m.mf.mount(o, mountpoint, logger)
	if err != nil {
		return notMounted(err)
	}
	// The mount answers once the kernel gets the attributes of its root.
	if _, err := os.Stat(mountpoint); err != nil {
		return notMounted(errors.Join(fmt.Errorf("%s: the mount does not answer: %w", o.st, err), srv.Unmount()))
	}
	if ready != nil {
		// Said to the caller, whose standard error this still is.
		switch {
		case noLog != nil && logFile != "":
			fmt.Fprintf(e.stderr, "zarrfs: no syslog (%v): the daemon logs to %s\n", noLog, logFile)
		case noLog != nil:
			fmt.Fprintf(e.stderr, "zarrfs: no syslog (%v) and no log file: the daemon will log nothing; use --log-file\n", noLog)
		}
		if err := detach(ready, logFile); err != nil {
			err = errors.Join(err, srv.Unmount())
			logger.Printf("mounted %s at %s, then unmounted it: %v", o.st, mountpoint, err)
			return err
		}
		logger.Printf("mounted %s at %s", o.st, mountpoint)
	}
	defer startProfile(logger)()
	return serve(e, srv, mountpoint, m.mf.grace, logger, nil)
}

// mountFormCommand is the root command, which is also the mount(8) form:
// `zarrfs STORE MOUNTPOINT -o OPTIONS`, as mount.fuse3 runs it for
// `mount -t fuse.zarrfs` and fstab lines of type fuse.zarrfs.
var mountFormCommand = command{
	name: "zarrfs", args: "STORE MOUNTPOINT [-o OPT[,OPT...]] [-f]",
	short: "mount Zarr hierarchies read-only: every array becomes a file of decoded bytes",
	summary: "zarrfs mounts Zarr hierarchies read-only: every array becomes a file of decoded bytes.\n\n" +
		"zarrfs STORE MOUNTPOINT mounts STORE and returns once the mount answers, serving it as a\n" +
		"daemon (-f: in the foreground) that logs to --log-file or syslog (without one, to\n" +
		"$XDG_STATE_HOME/zarrfs/zarrfs.log, or /var/log/zarrfs.log for root). It is what\n" +
		"`mount -t fuse.zarrfs STORE MOUNTPOINT -o OPTIONS` and fstab lines run, such as\n\n" +
		"    STORE  MOUNTPOINT  fuse.zarrfs  defaults,cache_size=2GiB,_netdev,nofail  0  0\n\n" +
		"The mount is read-only whatever the options say: the rw that mount(8) passes when ro\n" +
		"is absent mounts read-only with one notice. umount, fusermount3 -u and SIGTERM end it.\n\n" +
		"STORE is a directory, a .zip file, an http(s):// URL or s3://bucket/prefix; PATH a node such as sub/temp.",
	checkArgs: func(args []string) error {
		switch len(args) {
		case 0, 2:
			return nil
		case 1:
			return fmt.Errorf("unknown command %q", args[0])
		}
		return fmt.Errorf("want arguments STORE MOUNTPOINT, got %d", len(args))
	},
	// Completion offers the subcommands and files for STORE, then
	// directories for MOUNTPOINT.
	complete: func(args []string) cobra.ShellCompDirective {
		switch len(args) {
		case 0:
			return cobra.ShellCompDirectiveDefault
		case 1:
			return cobra.ShellCompDirectiveFilterDirs
		}
		return cobra.ShellCompDirectiveNoFileComp
	},
	flags: func(fl *pflag.FlagSet) func(context.Context, *env, []string) error {
		m := mountSpec{daemon: true}
		var foreground bool
		m.register(fl)
		fl.BoolVarP(&foreground, "foreground", "f", false, "stay in the foreground (as zarrfs mount does), logging to standard error")
		return func(ctx context.Context, e *env, args []string) error {
			if len(args) == 0 {
				e.root.Help()
				return errNoArgs
			}
			m.daemon = !foreground
			return m.run(ctx, e, args[0], args[1])
		}
	},
}
