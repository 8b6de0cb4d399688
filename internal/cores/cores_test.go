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

func TestSplit(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(runtime.NumCPU())
	cpus := runtime.NumCPU()
	for _, tc := range []struct {
		name string
		held int // CPUs that other split work holds
		n    int // parts of the work
		want int
	}{
		{"nothing to split", 0, 0, 1},
		{"one part", 0, 1, 1},
		{"every CPU free", 0, 1000, cpus},
		{"two parts", 0, 2, min(cpus, 2)},
		{"every CPU held", cpus, 1000, 1},
		{"more held than CPUs", cpus + 3, 1000, 1},
		{"one CPU held", 1, 1000, max(cpus-1, 1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			busy.Store(int64(tc.held))
			defer busy.Store(0)
			got, done := Split(tc.n)
			if got != tc.want {
				t.Errorf("Split(%d) with %d of %d CPUs held = %d, want %d", tc.n, tc.held, cpus, got, tc.want)
			}
			if tc.n > 1 {
				if b := busy.Load() - int64(tc.held); b != int64(got) {
					t.Errorf("Split(%d) counted %d goroutines busy, want %d", tc.n, b, got)
				}
			}
			done()
			if b := busy.Load(); b != int64(tc.held) {
				t.Errorf("after done, %d busy, want %d", b, tc.held)
			}
		})
	}
}

func TestSplitNested(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	runtime.GOMAXPROCS(runtime.NumCPU())
	if runtime.NumCPU() < 2 {
		t.Skip("one CPU: nothing to share")
	}
	first, doneFirst := Split(1000)
	second, doneSecond := Split(1000)
	if first != runtime.NumCPU() || second != 1 {
		t.Errorf("Split twice at once = %d then %d, want %d then 1", first, second, runtime.NumCPU())
	}
	doneFirst()
	third, doneThird := Split(1000)
	if third != runtime.NumCPU()-1 {
		t.Errorf("Split beside one running alone = %d, want %d", third, runtime.NumCPU()-1)
	}
	doneSecond()
	doneThird()
	if b := busy.Load(); b != 0 {
		t.Errorf("all done, %d busy", b)
	}
}
