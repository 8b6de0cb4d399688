package memory

import (
	"testing"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(*testing.T) store.Store { return New() })
}

func TestConformanceFromMap(t *testing.T) {
	storetest.RunReadOnly(t, func(t *testing.T, data map[string][]byte) store.Store {
		s, err := FromMap(data)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}
