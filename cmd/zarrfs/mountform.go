package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
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

// register registers the mount and store flags and -o on fl.
func (m *mountSpec) register(fl *pflag.FlagSet) {
	m.optionFlags = pflag.NewFlagSet("options", pflag.ContinueOnError)
	m.optionFlags.SortFlags = false
	m.mf.register(m.optionFlags)
	m.sf = storeFlagsFor(m.optionFlags)
	fl.AddFlagSet(m.optionFlags)
	fl.StringArrayVarP(&m.options, "options", "o", nil,
		"mount options, comma-separated: every flag above as NAME=VALUE with underscores (cache_size=2GiB, store_timeout=10s)\n"+
			"or NAME for a switch (allow_other); ro, rw (mounted read-only all the same) and the generic options of mount(8), fstab and systemd are accepted")
}

// genericOptions are the options mount(8), fstab and systemd pass or
// leave in a line, which zarrfs accepts: the mount is read-only and holds
// no devices, set-user-ID or executable files whatever they say, and the
// others are for mount(8) and systemd alone. rw is noted elsewhere.
var genericOptions = map[string]bool{
	"ro": true, "defaults": true, "auto": true, "noauto": true, "nofail": true, "_netdev": true,
	"user": true, "users": true, "nouser": true, "owner": true, "group": true,
	"dev": true, "nodev": true, "suid": true, "nosuid": true, "exec": true, "noexec": true,
	"async": true, "sync": true, "atime": true, "noatime": true, "relatime": true, "norelatime": true,
	"strictatime": true, "nostrictatime": true, "diratime": true, "nodiratime": true,
	"lazytime": true, "nolazytime": true, "silent": true, "loud": true,
}

// isGenericOption reports whether opt (NAME or NAME=VALUE) is one of the
// generic options: those above, user=NAME (libmount's, for user mounts),
// and x-* and comment=… (options for userspace programs such as
// x-systemd.automount).
func isGenericOption(opt string) bool {
	name, _, hasValue := strings.Cut(opt, "=")
	switch {
	case strings.HasPrefix(name, "x-") || name == "comment":
		return true
	case name == "user":
		return true
	}
	return genericOptions[name] && !hasValue
}

// applyOptions sets the flags the -o options name. It refuses any option
// that is neither a flag nor generic, naming it; rw sets m.rw.
func (m *mountSpec) applyOptions() error {
	for _, arg := range m.options {
		for _, opt := range strings.Split(arg, ",") {
			if err := m.applyOption(opt); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *mountSpec) applyOption(opt string) error {
	name, value, hasValue := strings.Cut(opt, "=")
	switch {
	case opt == "":
		return nil
	case opt == "rw":
		// mount(8) passes rw whenever ro is absent, so it cannot tell a
		// default from a choice: mount read-only, as a write-protected
		// ISO image does, and say so (run).
		m.rw = true
		return nil
	case isGenericOption(opt):
		return nil
	}
	f := m.optionFlags.Lookup(strings.ReplaceAll(name, "_", "-"))
	if f == nil {
		return fmt.Errorf("unknown option %q", opt)
	}
	if !hasValue {
		if f.NoOptDefVal == "" {
			return fmt.Errorf("option %q needs a value (%s=…)", name, name)
		}
		value = f.NoOptDefVal
	}
	if err := m.optionFlags.Set(f.Name, value); err != nil {
		return fmt.Errorf("option %q: %v", opt, err)
	}
	return nil
}

// daemonEnv names the file descriptor a daemon's child reports readiness
// on; its presence tells the child it is one.
const daemonEnv = "ZARRFS_DAEMON_READY_FD"

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
	o, e, err := openServed(ctx, e, spec, m.sf, &m.mf, logger)
	if err != nil {
		return err
	}
	defer o.close()
	srv, err := m.mf.mount(o, mountpoint, logger)
	if err != nil {
		return err
	}
	// The mount answers once the kernel gets the attributes of its root.
	if _, err := os.Stat(mountpoint); err != nil {
		return errors.Join(fmt.Errorf("%s: the mount does not answer: %w", o.st, err), srv.Unmount())
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

// openServed opens STORE for a front end that serves it until told to
// stop, the mount or `zarrfs serve`: the whole of an Icechunk repository
// (branches/, tags/, snapshots/) unless --ref names one, live when --live
// says so, and SIGINT or SIGTERM while the store is being opened stop it
// (see cancelOnSignal, whose env it returns).
func openServed(ctx context.Context, e *env, spec string, sf *storeFlags, mf *mountFlags, logger *log.Logger) (*opened, *env, error) {
	sf.logf = logger.Printf
	sf.whole = true
	sf.live = mf.live > 0
	openCtx, e, done := cancelOnSignal(ctx, e)
	o, err := openHierarchy(openCtx, spec, sf, mf.options())
	done()
	if err != nil {
		if cause := context.Cause(openCtx); cause != nil {
			return nil, e, fmt.Errorf("%v while opening %s: stopped", cause, spec)
		}
		return nil, e, err
	}
	return o, e, nil
}

// cancelOnSignal returns a context that SIGINT or SIGTERM cancels until
// opened is called, so that a store that does not answer (with no
// --store-timeout) does not hold the command after it is told to stop, and
// an env whose signals are e's: each signal also goes on to serve.
func cancelOnSignal(ctx context.Context, e *env) (_ context.Context, _ *env, opened func()) {
	if e.signals == nil {
		return ctx, e, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	var opening atomic.Bool
	opening.Store(true)
	fwd := make(chan os.Signal, 2)
	go func() {
		for sig := range e.signals {
			if opening.Load() {
				cancel(fmt.Errorf("%v", sig))
			}
			select {
			case fwd <- sig:
			default:
			}
		}
	}()
	e2 := *e
	e2.signals = fwd
	return ctx, &e2, func() { opening.Store(false) }
}

// logger returns the logger of a mount and a function closing it: the
// flags' (--log-file or standard error), but for a daemon, which has no
// standard error once detached, --log-file or else syslog, or without a
// syslog to write to, the file stateLogFile names: then noLog says why
// syslog failed and logFile is that file ("" when it could not be opened
// either, and the daemon logs nothing).
func (m *mountSpec) logger(e *env, daemon bool) (logger *log.Logger, closeLog func(), logFile string, noLog, err error) {
	if !daemon || m.mf.logFile != "" {
		logger, closeLog, err = m.mf.logger(e)
		return logger, closeLog, m.mf.logFile, nil, err
	}
	w, err := openSyslog()
	if err == nil {
		return log.New(w, "", 0), func() { w.Close() }, "", nil, nil
	}
	noLog = err
	if path, perr := stateLogFile(os.Geteuid(), os.Getenv); perr == nil {
		if f, ferr := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); ferr == nil {
			return log.New(f, "zarrfs: ", log.LstdFlags), func() { f.Close() }, path, noLog, nil
		}
	}
	return log.New(io.Discard, "", 0), func() {}, "", noLog, nil
}

// stateLogFile returns the file a daemon logs to when there is no syslog,
// making its directory: /var/log/zarrfs.log for root (euid 0), else
// zarrfs.log in $XDG_STATE_HOME/zarrfs ($HOME/.local/state/zarrfs by
// default), the XDG base directory for such state. getenv reads the
// environment.
func stateLogFile(euid int, getenv func(string) string) (string, error) {
	if euid == 0 {
		return "/var/log/zarrfs.log", nil
	}
	dir := getenv("XDG_STATE_HOME")
	if !filepath.IsAbs(dir) {
		home := getenv("HOME")
		if !filepath.IsAbs(home) {
			return "", errors.New("no $XDG_STATE_HOME or $HOME")
		}
		dir = filepath.Join(home, ".local", "state")
	}
	dir = filepath.Join(dir, "zarrfs")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return filepath.Join(dir, "zarrfs.log"), nil
}

// detach ends the daemon's ties to its caller once the mount answers: its
// standard streams go to /dev/null, but standard error to logFile when
// there is one (where a crash then leaves its trace), which closes the
// caller's copy of standard error; then it says "ok" on ready and leaves
// the directory it was started in.
func detach(ready *os.File, logFile string) error {
	null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer null.Close()
	stderr := null
	if logFile != "" {
		if stderr, err = os.OpenFile(logFile, os.O_WRONLY|os.O_APPEND, 0); err != nil {
			return fmt.Errorf("log file: %w", err)
		}
		defer stderr.Close()
	}
	for fd, f := range []*os.File{null, null, stderr} {
		if err := dup2(f, fd); err != nil {
			return fmt.Errorf("detach: %w", err)
		}
	}
	_, err = ready.WriteString("ok\n")
	ready.Close()
	if err != nil {
		return fmt.Errorf("the caller is gone: %w", err)
	}
	return os.Chdir("/")
}

// errReported is the error of a daemon whose child has already said why
// it failed on the caller's standard error: exit status 1, nothing more.
var errReported = errors.New("reported")

// startDaemon runs this command line again in a child process, in a
// session of its own, and returns once the child reports that its mount
// answers, or fails when the child exits first. Until then the child's
// standard error is the caller's: its error, if any, is the one line the
// caller sees.
func startDaemon(e *env) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	readyR, readyW, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	defer readyR.Close()
	errR, errW, err := os.Pipe()
	if err != nil {
		readyW.Close()
		return fmt.Errorf("daemon: %w", err)
	}
	defer errR.Close()
	cmd := exec.Command(exe, e.args...)
	cmd.Env = append(os.Environ(), daemonEnv+"=3")
	cmd.Stderr = errW
	cmd.ExtraFiles = []*os.File{readyW}
	newSession(cmd)
	err = cmd.Start()
	readyW.Close()
	errW.Close()
	if err != nil {
		return fmt.Errorf("daemon: %w", err)
	}
	var copied sync.WaitGroup
	copied.Go(func() { io.Copy(e.stderr, errR) })
	readyMsg := make(chan string, 1)
	go func() {
		msg, _ := io.ReadAll(readyR)
		readyMsg <- string(msg)
	}()
	var msg string
	select {
	case msg = <-readyMsg:
	case sig := <-e.signals:
		// Interrupted while the daemon opens the store or mounts: it
		// stops (unmounting, if it got that far) and the caller returns.
		cmd.Process.Signal(syscall.SIGTERM)
		return fmt.Errorf("%v before the mount answered: stopped the daemon", sig)
	}
	copied.Wait()
	if msg == "ok\n" {
		return cmd.Process.Release()
	}
	if err := cmd.Wait(); err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) && exit.Exited() {
			return errReported
		}
		return fmt.Errorf("daemon: %w", err)
	}
	return errors.New("daemon: exited before mounting")
}

// mountFormCommand returns the root command, which is also the mount(8)
// form: `zarrfs STORE MOUNTPOINT -o OPTIONS`, as mount.fuse3 runs it for
// `mount -t fuse.zarrfs` and fstab lines of type fuse.zarrfs.
func mountFormCommand(e *env) *cobra.Command {
	m := mountSpec{daemon: true}
	var foreground bool
	cmd := &cobra.Command{
		Use:   "zarrfs STORE MOUNTPOINT [-o OPT[,OPT...]] [-f]",
		Short: "mount Zarr hierarchies read-only: every array becomes a file of decoded bytes",
		Long: "zarrfs mounts Zarr hierarchies read-only: every array becomes a file of decoded bytes.\n\n" +
			"zarrfs STORE MOUNTPOINT mounts STORE and returns once the mount answers, serving it as a\n" +
			"daemon (-f: in the foreground) that logs to --log-file or syslog (without one, to\n" +
			"$XDG_STATE_HOME/zarrfs/zarrfs.log, or /var/log/zarrfs.log for root). It is what\n" +
			"`mount -t fuse.zarrfs STORE MOUNTPOINT -o OPTIONS` and fstab lines run, such as\n\n" +
			"    STORE  MOUNTPOINT  fuse.zarrfs  defaults,cache_size=2GiB,_netdev,nofail  0  0\n\n" +
			"The mount is read-only whatever the options say: the rw that mount(8) passes when ro\n" +
			"is absent mounts read-only with one notice. umount, fusermount3 -u and SIGTERM end it.\n\n" +
			"STORE is a directory, a .zip file, an http(s):// URL or s3://bucket/prefix; PATH a node such as sub/temp.",
		Args: func(_ *cobra.Command, args []string) error {
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
		ValidArgsFunction: func(_ *cobra.Command, args []string, _ string) ([]cobra.Completion, cobra.ShellCompDirective) {
			switch len(args) {
			case 0:
				return nil, cobra.ShellCompDirectiveDefault
			case 1:
				return nil, cobra.ShellCompDirectiveFilterDirs
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				cmd.Help()
				return errNoArgs
			}
			m.daemon = !foreground
			if err := m.run(cmd.Context(), e, args[0], args[1]); err != nil {
				return runError{err}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.SortFlags = false
	m.register(fl)
	fl.BoolVarP(&foreground, "foreground", "f", false, "stay in the foreground (as zarrfs mount does), logging to standard error")
	return cmd
}
