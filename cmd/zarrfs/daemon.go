package main

import (
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
)

// Daemonizing the mount(8) form: the caller runs its command line again in
// a child (startDaemon), which mounts, logs where a daemon can, and
// detaches once the mount answers (detach).

// daemonEnv names the file descriptor a daemon's child reports readiness
// on; its presence tells the child it is one.
const daemonEnv = "ZARRFS_DAEMON_READY_FD"

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
