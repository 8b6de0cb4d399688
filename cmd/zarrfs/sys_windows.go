package main

import (
	"errors"
	"io"
	"os"
	"os/exec"
)

// Windows has no FUSE, so no daemon: these are never reached there (the
// mount fails first), and fail if they are.

var errNoDaemon = errors.New("no daemon on Windows: use zarrfs serve")

func openSyslog() (io.WriteCloser, error) { return nil, errNoDaemon }

func dup2(*os.File, int) error { return errNoDaemon }

func newSession(*exec.Cmd) {}
