package diskcache

import (
	"fmt"
	"slices"
	"testing"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/storetest"
)

// TestConformanceDir: over the directory store the cache keeps its
// store.ReaderInto and store.AllocGetter (reads that go to that store),
// which the suite checks, and every other optional interface of it,
// and adds store.Holder.
func TestConformanceDir(t *testing.T) {
	c, err := Open(t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	<-c.scanned // before TempDir's cleanup removes the folder
	n := 0
	storetest.Run(t, func(t *testing.T) store.Store {
		d, err := dir.Open(t.TempDir(), dir.Options{})
		if err != nil {
			t.Fatal(err)
		}
		n++
		s := c.Wrap(d, fmt.Sprint("dir", n))
		if got, want := storetest.Capabilities(s), append(storetest.Capabilities(d), "Holder"); !slices.Equal(got, want) {
			t.Fatalf("cached dir store implements %v; the store itself %v", got, want)
		}
		return s
	})
}
