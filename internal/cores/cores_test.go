package cores

import (
	"runtime"
	"testing"
)

func TestWorkers(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(runtime.NumCPU() + 2)
	if got := Workers(); got != runtime.NumCPU() {
		t.Errorf("GOMAXPROCS above the CPUs: Workers() = %d, want NumCPU %d", got, runtime.NumCPU())
	}
	runtime.GOMAXPROCS(1)
	if got := Workers(); got != 1 {
		t.Errorf("GOMAXPROCS 1: Workers() = %d, want 1", got)
	}
}
