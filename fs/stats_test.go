//go:build linux

package fs

import (
	"testing"
	"testing/synctest"
	"time"
)

// statWatch: attributes off at first, on after a lookup of a file, off
// again once statWindow has passed without one. It runs in a synctest
// bubble: statWindow (2 s) passes on the bubble's clock, at once.
func TestStatWatch(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var w statWatch
		if w.on() {
			t.Error("on before any lookup")
		}
		w.saw()
		if !w.on() {
			t.Error("off right after a lookup")
		}
		time.Sleep(statWindow - time.Nanosecond)
		if !w.on() {
			t.Errorf("off %v after the last lookup, before statWindow (%v) passed", statWindow-time.Nanosecond, statWindow)
		}
		time.Sleep(statWindow)
		if w.on() {
			t.Errorf("still on %v after the last lookup", 2*statWindow-time.Nanosecond)
		}
	})
}
