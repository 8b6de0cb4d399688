package store

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"reflect"
	"slices"
	"testing"
)

// optionalTypes are the optional interfaces in the order of Decorate's bits.
var optionalTypes = []reflect.Type{
	reflect.TypeFor[Lister](),
	reflect.TypeFor[Stater](),
	reflect.TypeFor[InfoGetter](),
	reflect.TypeFor[Writer](),
	reflect.TypeFor[PageLister](),
	reflect.TypeFor[ReaderInto](),
	reflect.TypeFor[AllocGetter](),
	reflect.TypeFor[Holder](),
}

// partialTypes are the optional interfaces Full leaves out: a decorator
// implements them when it can serve them.
var partialTypes = map[reflect.Type]bool{
	reflect.TypeFor[ReaderInto]():  true,
	reflect.TypeFor[AllocGetter](): true,
	reflect.TypeFor[Holder]():      true,
}

// full implements Full, ReaderInto, AllocGetter and Holder, answering
// nothing.
type full struct{ fullOnly }

// fullOnly implements Full and no more: a decorator that cannot serve
// ReaderInto, AllocGetter and Holder.
type fullOnly struct{}

func (full) Holds(string) bool                                              { return false }
func (full) ReadInto(context.Context, string, []byte, int64) (int64, error) { return 0, nil }
func (full) GetAlloc(context.Context, string, func(int) []byte) ([]byte, error) {
	return nil, nil
}

func (fullOnly) Get(context.Context, string) ([]byte, error)                 { return nil, nil }
func (fullOnly) GetRange(context.Context, string, ByteRange) ([]byte, error) { return nil, nil }
func (fullOnly) String() string                                              { return "full" }
func (fullOnly) Close() error                                                { return nil }
func (fullOnly) ListDir(context.Context, string) ([]string, []string, error) { return nil, nil, nil }
func (fullOnly) ListPrefix(context.Context, string) ([]string, error)        { return nil, nil }
func (fullOnly) Stat(context.Context, string) (Info, error)                  { return Info{}, nil }
func (fullOnly) Set(context.Context, string, []byte) error                   { return nil }
func (fullOnly) Delete(context.Context, string) error                        { return nil }
func (fullOnly) ListPrefixPage(context.Context, string, string) ([]string, bool, error) {
	return nil, false, nil
}
func (fullOnly) GetRangeInfo(context.Context, string, ByteRange) ([]byte, Info, error) {
	return nil, Info{}, nil
}
func (fullOnly) GetIfChanged(context.Context, string, Info) ([]byte, Info, error) {
	return nil, Info{}, nil
}

// extending implements Full, ReaderInto and AllocGetter, and extends the
// store it wraps with those its fields say.
type extending struct {
	full
	into, alloc bool
}

func (e extending) Extends() (readInto, allocGetter bool) { return e.into, e.alloc }

// extendingOnly implements Full and no more, yet says it extends with
// both ReaderInto and AllocGetter.
type extendingOnly struct{ fullOnly }

func (extendingOnly) Extends() (readInto, allocGetter bool) { return true, true }

// TestDecorate checks that the optional interfaces Decorate knows are every
// interface this package declares besides Store, Full and Extender, and that for each
// subset of them a decorated store implements exactly that subset.
func TestDecorate(t *testing.T) {
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, ".", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var declared []string
	for _, f := range pkgs["store"].Files {
		ast.Inspect(f, func(n ast.Node) bool {
			if ts, ok := n.(*ast.TypeSpec); ok && ts.Name.IsExported() && !ts.Assign.IsValid() {
				if _, ok := ts.Type.(*ast.InterfaceType); ok && !slices.Contains([]string{"Store", "Full", "Extender"}, ts.Name.Name) {
					declared = append(declared, ts.Name.Name)
				}
			}
			return true
		})
	}
	var known []string
	for _, o := range optionalTypes {
		known = append(known, o.Name())
		if got := reflect.TypeFor[Full]().Implements(o); got == partialTypes[o] {
			t.Errorf("Full includes %s: %v", o.Name(), got)
		}
	}
	slices.Sort(declared)
	slices.Sort(known)
	if !slices.Equal(declared, known) {
		t.Fatalf("package store declares the optional interfaces %v; Decorate knows %v", declared, known)
	}
	if len(decorated) != 1<<len(optionalTypes) {
		t.Fatalf("%d decorated shapes for %d optional interfaces", len(decorated), len(optionalTypes))
	}
	for m := range decorated {
		// under has exactly the interfaces of m (if decorated[m] is right,
		// which the checks on s below find out either way).
		under := decorated[m](full{})
		s := Decorate(full{}, under)
		holder := reflect.TypeFor[Holder]()
		for i, o := range optionalTypes {
			want := m&(1<<i) != 0
			if got := reflect.TypeOf(under).Implements(o); got != want {
				t.Errorf("decorated[%d] implements %s: %v, want %v", m, o.Name(), got, want)
			}
			want = want || o == holder // what a Holder decorator holds, whatever it wraps
			if got := reflect.TypeOf(s).Implements(o); got != want {
				t.Errorf("Decorate of a store with interfaces %d implements %s: %v, want %v", m, o.Name(), got, want)
			}
		}
		if _, ok := s.(Closer); !ok {
			t.Errorf("Decorate of a store with interfaces %d is no io.Closer", m)
		}
		if s.String() != "full" {
			t.Errorf("Decorate(...).String() = %q", s.String())
		}
		// A decorator that cannot serve ReaderInto and AllocGetter does
		// not claim them, whatever it wraps; it keeps the others.
		s = Decorate(fullOnly{}, under)
		for i, o := range optionalTypes {
			want := m&(1<<i) != 0 && !partialTypes[o]
			if got := reflect.TypeOf(s).Implements(o); got != want {
				t.Errorf("Decorate of a Full-only decorator of a store with interfaces %d implements %s: %v, want %v", m, o.Name(), got, want)
			}
		}
		// An Extender adds those of ReaderInto and AllocGetter it
		// extends with, whatever under has; a Full-only decorator that
		// says it extends still cannot claim what it does not implement.
		for _, ext := range [...][2]bool{{false, false}, {true, false}, {false, true}, {true, true}} {
			e := extending{into: ext[0], alloc: ext[1]}
			s = Decorate(e, under)
			for i, o := range optionalTypes {
				want := m&(1<<i) != 0 ||
					o == reflect.TypeFor[ReaderInto]() && e.into ||
					o == reflect.TypeFor[AllocGetter]() && e.alloc ||
					o == holder
				if got := reflect.TypeOf(s).Implements(o); got != want {
					t.Errorf("Decorate of an extender (%v) of a store with interfaces %d implements %s: %v, want %v", ext, m, o.Name(), got, want)
				}
			}
		}
		s = Decorate(extendingOnly{}, under)
		for i, o := range optionalTypes {
			want := m&(1<<i) != 0 && !partialTypes[o]
			if got := reflect.TypeOf(s).Implements(o); got != want {
				t.Errorf("Decorate of a Full-only extender of a store with interfaces %d implements %s: %v, want %v", m, o.Name(), got, want)
			}
		}
	}
}
