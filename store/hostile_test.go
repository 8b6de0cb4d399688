package store_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/memory"
)

// TestHostileKeys checks that ValidateKey refuses every key of
// testdata/hostile/keys.txt with its reason, and that a store refuses it
// before looking anything up, even when a value with a similar clean name
// exists.
func TestHostileKeys(t *testing.T) {
	ctx := context.Background()
	st, err := memory.FromMap(map[string][]byte{"x": []byte("x"), "etc/passwd": []byte("p"), "a/b": []byte("ab")})
	if err != nil {
		t.Fatal(err)
	}
	keys := store.HostileKeys(t)
	if len(keys) < 20 {
		t.Fatalf("only %d hostile keys", len(keys))
	}
	for _, k := range keys {
		var ike *store.InvalidKeyError
		err := store.ValidateKey(k.Key)
		if !errors.As(err, &ike) || ike.Key != k.Key || !strings.Contains(ike.Reason, k.Reason) {
			t.Errorf("ValidateKey(%q) = %v, want an *InvalidKeyError saying %q", k.Key, err, k.Reason)
		}
		if errors.Is(err, store.ErrNotExist) {
			t.Errorf("ValidateKey(%q) matches ErrNotExist", k.Key)
		}
		if v, err := st.Get(ctx, k.Key); !errors.As(err, &ike) {
			t.Errorf("Get(%q) = %q, %v; want an *InvalidKeyError", k.Key, v, err)
		}
		if v, err := st.GetRange(ctx, k.Key, store.SuffixRange(1)); !errors.As(err, &ike) {
			t.Errorf("GetRange(%q) = %q, %v; want an *InvalidKeyError", k.Key, v, err)
		}
	}
	long := strings.Repeat("a/", store.MaxKeyLength/2) + "b"
	if err := store.ValidateKey(long); err == nil {
		t.Errorf("a %d-byte key was accepted", len(long))
	}
}
