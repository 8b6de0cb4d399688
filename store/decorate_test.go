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
}

// full implements Full, answering nothing.
type full struct{}

func (full) Get(context.Context, string) ([]byte, error)                 { return nil, nil }
func (full) GetRange(context.Context, string, ByteRange) ([]byte, error) { return nil, nil }
func (full) String() string                                              { return "full" }
func (full) Close() error                                                { return nil }
func (full) ListDir(context.Context, string) ([]string, []string, error) { return nil, nil, nil }
func (full) ListPrefix(context.Context, string) ([]string, error)        { return nil, nil }
func (full) Stat(context.Context, string) (Info, error)                  { return Info{}, nil }
func (full) Set(context.Context, string, []byte) error                   { return nil }
func (full) Delete(context.Context, string) error                        { return nil }
func (full) ListPrefixPage(context.Context, string, string) ([]string, bool, error) {
	return nil, false, nil
}
func (full) GetRangeInfo(context.Context, string, ByteRange) ([]byte, Info, error) {
	return nil, Info{}, nil
}
func (full) GetIfChanged(context.Context, string, Info) ([]byte, Info, error) {
	return nil, Info{}, nil
}

// TestDecorate checks that the optional interfaces Decorate knows are every
// interface this package declares besides Store and Full, and that for each
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
				if _, ok := ts.Type.(*ast.InterfaceType); ok && ts.Name.Name != "Store" && ts.Name.Name != "Full" {
					declared = append(declared, ts.Name.Name)
				}
			}
			return true
		})
	}
	var known []string
	for _, o := range optionalTypes {
		known = append(known, o.Name())
		if !reflect.TypeFor[Full]().Implements(o) {
			t.Errorf("Full does not include %s", o.Name())
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
		for i, o := range optionalTypes {
			want := m&(1<<i) != 0
			if got := reflect.TypeOf(under).Implements(o); got != want {
				t.Errorf("decorated[%d] implements %s: %v, want %v", m, o.Name(), got, want)
			}
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
	}
}
