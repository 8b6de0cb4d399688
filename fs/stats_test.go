//go:build linux

package fs

import (
	"testing"
	"time"
)

// statWatch: attributes off at first, on after a lookup of a file, off
// again once statWindow has passed without one.
func TestStatWatch(t *testing.T) {
	window := statWindow
	statWindow = 50 * time.Millisecond
	t.Cleanup(func() { statWindow = window })
	var w statWatch
	if w.on() {
		t.Error("on before any lookup")
	}
	w.saw()
	if !w.on() {
		t.Error("off right after a lookup")
	}
	time.Sleep(2 * statWindow)
	if w.on() {
		t.Errorf("still on %v after the last lookup", 2*statWindow)
	}
}
