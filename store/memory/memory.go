// Package memory is an in-memory zarrfs store: a map of keys to values
// guarded by a read-write mutex. Values are copied on the way in and out, so
// neither the caller nor the store can change what the other holds. It
// implements store.Store, store.Lister, store.PageLister, store.Writer and store.Stater and is
// meant for tests and for building hierarchies in memory.
package memory

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zarrfs/zarrfs/store"
)

type entry struct {
	value   []byte
	modTime time.Time
}

// Store is an in-memory store. The zero value is not usable; call New.
type Store struct {
	name string
	mu   sync.RWMutex
	m    map[string]entry
}

var (
	_ store.Store      = (*Store)(nil)
	_ store.Lister     = (*Store)(nil)
	_ store.PageLister = (*Store)(nil)
	_ store.Writer     = (*Store)(nil)
	_ store.Stater     = (*Store)(nil)
)

// New returns an empty store.
func New() *Store { return &Store{name: "memory", m: make(map[string]entry)} }

// NewNamed returns an empty store whose String is "memory NAME".
func NewNamed(name string) *Store {
	s := New()
	s.name = "memory " + name
	return s
}

// FromMap returns a store holding a copy of every key and value of m. It
// fails on the first key that store.ValidateKey refuses.
func FromMap(m map[string][]byte) (*Store, error) {
	s := New()
	now := time.Now()
	for k, v := range m {
		if err := store.ValidateKey(k); err != nil {
			return nil, err
		}
		s.m[k] = entry{value: slices.Clone(v), modTime: now}
	}
	return s, nil
}

// String names the store.
func (s *Store) String() string { return s.name }

func (s *Store) lookup(ctx context.Context, key string) (entry, error) {
	if err := store.CheckKey(ctx, key); err != nil {
		return entry{}, err
	}
	s.mu.RLock()
	e, ok := s.m[key]
	s.mu.RUnlock()
	if !ok {
		return entry{}, fmt.Errorf("%s: %q: %w", s.name, key, store.ErrNotExist)
	}
	return e, nil
}

// Get returns a copy of the value of key.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	e, err := s.lookup(ctx, key)
	if err != nil {
		return nil, err
	}
	return cloneNonNil(e.value), nil
}

// GetRange returns a copy of the part of the value of key that r selects.
func (s *Store) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	e, err := s.lookup(ctx, key)
	if err != nil {
		return nil, err
	}
	start, end, err := r.Resolve(int64(len(e.value)))
	if err != nil {
		return nil, fmt.Errorf("%s: %q: %w", s.name, key, err)
	}
	return cloneNonNil(e.value[start:end]), nil
}

// cloneNonNil copies b, returning an empty non-nil slice for empty input.
func cloneNonNil(b []byte) []byte {
	out := make([]byte, len(b))
	copy(out, b)
	return out
}

// Stat returns the size of the value of key and when it was last set.
func (s *Store) Stat(ctx context.Context, key string) (store.Info, error) {
	e, err := s.lookup(ctx, key)
	if err != nil {
		return store.Info{}, err
	}
	return store.Info{Size: int64(len(e.value)), ModTime: e.modTime}, nil
}

// Set stores a copy of value under key.
func (s *Store) Set(ctx context.Context, key string, value []byte) error {
	if err := store.CheckKey(ctx, key); err != nil {
		return err
	}
	v := cloneNonNil(value)
	s.mu.Lock()
	s.m[key] = entry{value: v, modTime: time.Now()}
	s.mu.Unlock()
	return nil
}

// Delete removes key; a missing key is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := store.CheckKey(ctx, key); err != nil {
		return err
	}
	s.mu.Lock()
	delete(s.m, key)
	s.mu.Unlock()
	return nil
}

// ListDir returns the names of the values directly under dir and of the
// folders below it, both sorted.
func (s *Store) ListDir(ctx context.Context, dir string) (keys, prefixes []string, err error) {
	if err := store.CheckListDir(ctx, dir); err != nil {
		return nil, nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	keys, prefixes = store.DirEntries(dir, maps.Keys(s.m))
	return keys, prefixes, nil
}

// PageSize is how many keys a page of ListPrefixPage holds.
const PageSize = 1000

// ListPrefixPage returns the first PageSize keys, sorted, that start with
// prefix and sort after startAfter: the store pages its listings as S3
// does, so that it can stand for one in tests.
func (s *Store) ListPrefixPage(ctx context.Context, prefix, startAfter string) ([]string, bool, error) {
	keys, err := s.ListPrefix(ctx, prefix)
	if err != nil {
		return nil, false, err
	}
	i, found := slices.BinarySearch(keys, startAfter)
	if found {
		i++
	}
	keys = keys[i:]
	if len(keys) > PageSize {
		return keys[:PageSize], true, nil
	}
	return keys, false, nil
}

// ListPrefix returns every key that starts with prefix, sorted.
func (s *Store) ListPrefix(ctx context.Context, prefix string) ([]string, error) {
	if err := store.CheckListPrefix(ctx, prefix); err != nil {
		return nil, err
	}
	out := []string{}
	s.mu.RLock()
	for k := range s.m {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k)
		}
	}
	s.mu.RUnlock()
	slices.Sort(out)
	return out, nil
}
