//go:build linux

package fs

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// TestWhileCallerLives: a request's context ends once its caller has
// exited, not while it lives; requests with no pid, or not from FUSE,
// are not watched.
func TestWhileCallerLives(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	if err := cmd.Start(); err != nil {
		t.Skipf("sleep: %v", err)
	}
	fc := &fuse.Context{Caller: fuse.Caller{Pid: uint32(cmd.Process.Pid)}, Cancel: make(chan struct{})}
	ctx, stop := whileCallerLives(fc)
	defer stop()
	self := &fuse.Context{Caller: fuse.Caller{Pid: uint32(os.Getpid())}, Cancel: make(chan struct{})}
	selfCtx, stopSelf := whileCallerLives(self)
	defer stopSelf()
	time.Sleep(3 * callerCheck)
	if ctx.Err() != nil || selfCtx.Err() != nil {
		t.Fatal("cancelled while the caller lives")
	}
	cmd.Process.Kill()
	cmd.Wait()
	select {
	case <-ctx.Done():
		if context.Cause(ctx) != errCallerGone {
			t.Errorf("cause %v, want errCallerGone", context.Cause(ctx))
		}
	case <-time.After(2 * time.Second):
		t.Fatal("not cancelled 2 s after the caller exited")
	}
	if selfCtx.Err() != nil {
		t.Error("a living caller's request was cancelled")
	}
	for _, c := range []context.Context{context.Background(), &fuse.Context{Cancel: make(chan struct{})}} {
		if got, stop := whileCallerLives(c); got != c {
			t.Errorf("%T with no pid is watched", c)
		} else {
			stop()
		}
	}
}
