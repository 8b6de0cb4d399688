package main

import (
	"context"
	"io"
	"os"
	"syscall"
)

// errBrokenPipe is the cause of a context cancelled by cancelOnBrokenPipe.
var errBrokenPipe = &os.PathError{Op: "write", Path: "standard output", Err: syscall.EPIPE}

// cancelOnBrokenPipe does not watch on Windows, which has no poll(2) of a
// pipe: a cat whose reader has gone stops at its next write.
func cancelOnBrokenPipe(ctx context.Context, _ io.Writer) (context.Context, func()) {
	return ctx, func() {}
}
