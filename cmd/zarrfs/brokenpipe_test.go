//go:build !windows

package main

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"
)

// TestCancelOnBrokenPipe: the context ends, with errBrokenPipe, once the
// pipe's reader closes it; not before, and not for a writer that is no
// pipe.
func TestCancelOnBrokenPipe(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	ctx, stop := cancelOnBrokenPipe(context.Background(), w)
	defer stop()
	select {
	case <-ctx.Done():
		t.Fatal("cancelled while the pipe has a reader")
	case <-time.After(50 * time.Millisecond):
	}
	r.Close()
	select {
	case <-ctx.Done():
		if context.Cause(ctx) != errBrokenPipe {
			t.Errorf("cause %v, want errBrokenPipe", context.Cause(ctx))
		}
	case <-time.After(2 * time.Second):
		t.Fatal("not cancelled 2 s after the pipe's reader closed it")
	}
	// Not a pipe: nothing watched; stop ends a watch that saw nothing.
	ctx2, stop2 := cancelOnBrokenPipe(context.Background(), &bytes.Buffer{})
	stop2()
	if ctx2.Err() != nil {
		t.Error("a writer that is no pipe cancelled the context")
	}
	r3, w3, _ := os.Pipe()
	defer r3.Close()
	defer w3.Close()
	_, stop3 := cancelOnBrokenPipe(context.Background(), w3)
	stop3() // returns: the watch ends
}
