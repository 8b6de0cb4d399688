package memory

import (
	"context"
	"errors"
	"testing"

	"github.com/zarrfs/zarrfs/store"
)

func TestCopiesInAndOut(t *testing.T) {
	ctx := context.Background()
	s := New()
	v := []byte("abc")
	if err := s.Set(ctx, "a/b", v); err != nil {
		t.Fatal(err)
	}
	v[0] = 'X'
	got, err := s.Get(ctx, "a/b")
	if err != nil || string(got) != "abc" {
		t.Fatalf("Get = %q, %v; want abc (Set must copy)", got, err)
	}
	got[0] = 'Y'
	again, _ := s.Get(ctx, "a/b")
	if string(again) != "abc" {
		t.Errorf("Get after caller modified result = %q; want abc (Get must copy)", again)
	}
	if _, err := s.Get(ctx, "a/c"); !errors.Is(err, store.ErrNotExist) {
		t.Errorf("Get missing: %v; want ErrNotExist", err)
	}
}

func TestFromMapRejectsBadKey(t *testing.T) {
	var ike *store.InvalidKeyError
	if _, err := FromMap(map[string][]byte{"../x": nil}); !errors.As(err, &ike) {
		t.Errorf("FromMap(../x) error = %v; want *store.InvalidKeyError", err)
	}
	s, err := FromMap(map[string][]byte{"x/y": []byte("1")})
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(context.Background(), "x/y"); err != nil || string(got) != "1" {
		t.Errorf("Get = %q, %v", got, err)
	}
}
