package integration

import (
	"debug/elf"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// TestBinaryStatic: the binary built as make build builds it links no C
// library, so it runs on any Linux of its architecture as it is copied.
func TestBinaryStatic(t *testing.T) {
	if peertest.RaceBuild {
		t.Skip("the race detector's build needs cgo")
	}
	f, err := elf.Open(zarrfsBin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("the binary names a dynamic loader (PT_INTERP): it was linked with cgo")
		}
	}
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatal(err)
	}
	if len(libs) > 0 {
		t.Errorf("the binary needs shared libraries: %v", libs)
	}
}
