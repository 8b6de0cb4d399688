package store

import "io"

//go:generate go run gen_decorate.go

// Full is what a store decorator (deadline, fault, diskcache) implements
// so that Decorate can give it the shape of the store it wraps: the read
// side, Close, and every optional interface that any decorator can serve,
// each passing the request on to the wrapped store. The optional
// interfaces that not every decorator can serve (ReaderInto and
// AllocGetter, which lend the caller's buffer to the store) a decorator
// implements when it can (and, as an Extender, may offer over a store
// that lacks them). Adding an optional interface to this package
// means adding it here (or to gen_decorate.go's partial), to Decorate's bits and to
// gen_decorate.go; TestDecorate fails until all agree with the interfaces
// this package declares.
type Full interface {
	Store
	io.Closer
	Lister
	Stater
	InfoGetter
	Writer
	PageLister
}

// Extender is implemented by a decorator that serves ReaderInto or
// AllocGetter on its own, not only by passing the call on, and so can
// offer it over a store that lacks it: the disk cache reads its entries
// into the caller's buffer, whatever the far store under it can do.
type Extender interface {
	// Extends reports which of ReaderInto and AllocGetter (of those the
	// decorator implements) it serves whatever the store it wraps has.
	Extends() (readInto, allocGetter bool)
}

// Decorate returns d exposing Store, io.Closer and exactly the optional
// interfaces (Lister, Stater, InfoGetter, Writer, PageLister, ReaderInto,
// AllocGetter) that under implements, so that callers who discover
// capabilities by type assertion see the same capabilities through the
// decorator as without it; of ReaderInto and AllocGetter, only those d
// implements too (a decorator that cannot serve one must not claim it),
// and, when d is an Extender, also those it extends under with; and
// Holder when d implements it (what it holds, whatever under has). d's
// methods of the other optional interfaces are never reached.
func Decorate(d Full, under Store) Store {
	var extInto, extAlloc bool
	if e, ok := d.(Extender); ok {
		extInto, extAlloc = e.Extends()
	}
	m := 0
	for i, has := range [...]bool{is[Lister](under), is[Stater](under), is[InfoGetter](under), is[Writer](under), is[PageLister](under),
		(is[ReaderInto](under) || extInto) && is[ReaderInto](d), (is[AllocGetter](under) || extAlloc) && is[AllocGetter](d),
		is[Holder](d)} {
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
