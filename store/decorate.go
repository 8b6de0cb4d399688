package store

import "io"

//go:generate go run gen_decorate.go

// Full is what a store decorator (deadline, fault) implements so that
// Decorate can give it the shape of the store it wraps: the read side,
// Close, and every optional interface, each passing the request on to the
// wrapped store. Adding an optional interface to this package means adding
// it here, to Decorate's bits and to gen_decorate.go; TestDecorate fails
// until all three agree with the interfaces this package declares.
type Full interface {
	Store
	io.Closer
	Lister
	Stater
	InfoGetter
	Writer
	PageLister
}

// Decorate returns d exposing Store, io.Closer and exactly the optional
// interfaces (Lister, Stater, InfoGetter, Writer, PageLister) that under implements, so
// that callers who discover capabilities by type assertion see the same
// capabilities through the decorator as without it. d's methods of the
// other optional interfaces are never reached.
func Decorate(d Full, under Store) Store {
	m := 0
	for i, has := range [...]bool{is[Lister](under), is[Stater](under), is[InfoGetter](under), is[Writer](under), is[PageLister](under)} {
		if has {
			m |= 1 << i
		}
	}
	return decorated[m](d)
}

// is reports whether s implements T.
func is[T any](s Store) bool {
	_, ok := s.(T)
	return ok
}
