//go:build !windows

package main

import (
	"context"
	"io"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// errBrokenPipe is the cause of a context cancelled by cancelOnBrokenPipe.
var errBrokenPipe = &os.PathError{Op: "write", Path: "standard output", Err: syscall.EPIPE}

// cancelOnBrokenPipe returns a context cancelled, with cause errBrokenPipe,
// when w is a pipe whose reader has gone (`zarrfs cat … | head` once head
// has what it wants): a write would fail then (SIGPIPE), but a read of an
// array can take long before the next write (tiny chunks over a store
// that cannot list), and the store requests for bytes nobody wants should
// stop at once. stop ends the watch.
func cancelOnBrokenPipe(ctx context.Context, w io.Writer) (_ context.Context, stop func()) {
	f, ok := w.(*os.File)
	if !ok {
		return ctx, func() {}
	}
	if st, err := f.Stat(); err != nil || st.Mode()&os.ModeNamedPipe == 0 {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	// The watch polls the pipe and a pipe of its own, whose closing ends
	// it: a pipe's writing end reports POLLERR once no reader is left.
	r, wake, err := os.Pipe()
	if err != nil {
		return ctx, func() { cancel(nil) }
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		fds := []unix.PollFd{{Fd: int32(f.Fd())}, {Fd: int32(r.Fd()), Events: unix.POLLIN}}
		for {
			if _, err := unix.Poll(fds, -1); err != nil && err != unix.EINTR {
				return
			}
			switch {
			case fds[1].Revents != 0:
				return
			case fds[0].Revents&(unix.POLLERR|unix.POLLHUP) != 0:
				cancel(errBrokenPipe)
				return
			}
		}
	}()
	return ctx, func() {
		wake.Close()
		<-done
		r.Close()
		cancel(nil)
	}
}
