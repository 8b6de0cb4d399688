//go:build !windows

package main

import (
	"io"
	"log/syslog"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// The daemon's ties to the system where there are sessions, syslog and
// dup2 (Linux; macOS and the BSDs build but cannot mount); sys_windows.go
// is Windows's.

// openSyslog opens the daemon's log in syslog.
func openSyslog() (io.WriteCloser, error) {
	return syslog.New(syslog.LOG_DAEMON|syslog.LOG_INFO, "zarrfs")
}

// dup2 makes fd a copy of f.
func dup2(f *os.File, fd int) error { return unix.Dup2(int(f.Fd()), fd) }

// newSession starts cmd in a session of its own.
func newSession(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true} }
