package icechunk

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/icechunk/icechunktest"
)

// farStore is a store a round trip of delay away, as HTTP is (no
// listing), counting its requests.
type farStore struct {
	store.Store
	delay time.Duration
	n     atomic.Int64
}

func (f *farStore) Get(ctx context.Context, key string) ([]byte, error) {
	f.n.Add(1)
	time.Sleep(f.delay)
	return f.Store.Get(ctx, key)
}

func (f *farStore) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	f.n.Add(1)
	time.Sleep(f.delay)
	return f.Store.GetRange(ctx, key, r)
}

// farLister is a farStore that lists, a round trip a listing, as S3 does.
type farLister struct{ *farStore }

func (f farLister) ListDir(ctx context.Context, d string) ([]string, []string, error) {
	f.n.Add(1)
	time.Sleep(f.delay)
	return f.Store.(store.Lister).ListDir(ctx, d)
}

func (f farLister) ListPrefix(ctx context.Context, p string) ([]string, error) {
	f.n.Add(1)
	time.Sleep(f.delay)
	return f.Store.(store.Lister).ListPrefix(ctx, p)
}

// TestOpenRoundTrips: opening a repository over a far store waits for
// one round trip (the repo file, refs/branch.main/ref.json and
// config.yaml at once), and a spec 1 repository on a store that lists (S3)
// two more: the listing of refs/, then its refs with the tags' tombstones
// at once. Before, those were read one after another: for icechunktest's
// repository (branches main and dev, tags v1, v2 and the deleted gone)
// nine round trips.
func TestOpenRoundTrips(t *testing.T) {
	const delay = 100 * time.Millisecond
	for _, tc := range []struct {
		name       string
		spec       int
		list       bool
		roundTrips int
	}{
		{"spec1", 1, false, 1},
		{"spec1 listed", 1, true, 3},
		{"spec2", 2, false, 1},
		{"spec2 listed", 2, true, 1}, // the spec 1 guess lists refs/ beside the repo file, not waited for
	} {
		t.Run(tc.name, func(t *testing.T) {
			tr := icechunktest.Write(t, tc.spec, false)
			local, err := dir.Open(tr.Dir, dir.Options{ReadOnly: true})
			if err != nil {
				t.Fatal(err)
			}
			far := &farStore{Store: local, delay: delay}
			var st store.Store = far
			if tc.list {
				st = farLister{far}
			}
			start := time.Now()
			r, err := Open(context.Background(), st, Options{})
			took := time.Since(start)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			if r.Spec() != tc.spec {
				t.Fatalf("spec %d, want %d", r.Spec(), tc.spec)
			}
			if tc.list && tc.spec == 1 && len(r.Tags()) != 2 {
				t.Errorf("tags %v, want v1 and v2 (gone is deleted)", r.Tags())
			}
			// Some room for a loaded machine, less than one round trip more.
			if limit := time.Duration(tc.roundTrips)*delay + delay*3/4; took >= limit {
				t.Errorf("open took %v (%d requests), want < %v: %d round trips of %v", took, far.n.Load(), limit, tc.roundTrips, delay)
			}
			t.Logf("open: %v, %d requests", took, far.n.Load())
		})
	}
}
