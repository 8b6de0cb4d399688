package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/icechunk"
	"github.com/zarrfs/zarrfs/store/storeurl"
	"github.com/zarrfs/zarrfs/zarr"
)

// openStore opens the store STORE names, read-only, as the store flags
// (nil: the defaults) say.
func openStore(ctx context.Context, spec string, sf *storeFlags) (store.Store, error) {
	return storeurl.Open(ctx, spec, sf.options())
}

// opened is an opened store and hierarchy.
type opened struct {
	spec string
	st   store.Store
	h    *zarr.Hierarchy
	opts zarr.Options // the options h was opened with
	// repo is the Icechunk repository st is a snapshot of (ref: which
	// one), or st itself (ref ""); nil for other stores.
	repo *icechunk.Tree
	ref  string
}

// openHierarchy opens the store STORE names and the hierarchy in it.
func openHierarchy(ctx context.Context, spec string, sf *storeFlags, opts zarr.Options) (*opened, error) {
	if isRemote(spec) {
		opts.Remote = true
		if sf != nil && opts.Concurrency == 0 {
			// Fetches from a remote store mostly wait: run as many as the
			// store may have in flight, not one per core.
			opts.Concurrency = sf.concurrency
		}
	}
	st, err := openStore(ctx, spec, sf)
	if err != nil {
		return nil, err
	}
	o := &opened{spec: spec, st: st, opts: opts}
	tree, isRepo := st.(*icechunk.Tree)
	if !isRepo && sf != nil && sf.ref != "" {
		closeStore(st)
		return nil, fmt.Errorf("%s: --ref %s: not an Icechunk repository", st, sf.ref)
	}
	if isRepo {
		o.repo = tree
		if sf == nil || !sf.whole || sf.ref != "" {
			o.ref = "main"
			if sf != nil && sf.ref != "" {
				o.ref = sf.ref
			}
			if o.st, err = tree.Repo().Ref(ctx, o.ref); err != nil {
				tree.Close()
				return nil, err
			}
		}
	}
	o.h, err = zarr.Open(ctx, o.st, opts)
	if err != nil {
		o.close()
		return nil, fmt.Errorf("%s: %w", o.st, err)
	}
	return o, nil
}

// reopen opens the hierarchy in the store again, as it now is, taking
// over the chunks of prev that did not change. An Icechunk repository's
// references are read again first: a branch's directory (or the branch
// --ref names) follows the branch.
func (o *opened) reopen(ctx context.Context, prev *zarr.Hierarchy) (*zarr.Hierarchy, error) {
	opts := o.opts
	opts.Previous = prev
	st := o.st
	if o.repo != nil {
		if err := o.repo.Refresh(ctx); err != nil {
			return nil, err
		}
		if o.ref != "" {
			s, err := o.repo.Repo().Ref(ctx, o.ref)
			if err != nil {
				return nil, err
			}
			st = s
		}
	}
	return zarr.Open(ctx, st, opts)
}

// close closes the store when it holds files or connections.
func (o *opened) close() {
	if o.repo != nil {
		o.repo.Close()
		return
	}
	closeStore(o.st)
}

func closeStore(st store.Store) {
	if c, ok := st.(io.Closer); ok {
		c.Close()
	}
}

// openNode opens the hierarchy in the store STORE names, as the
// subcommands that read one node do, and returns the node at path, with an
// error naming the store and the node. On error nothing is left open.
func openNode(ctx context.Context, spec string, sf *storeFlags, path string) (*opened, *zarr.Node, error) {
	o, err := openHierarchy(ctx, spec, sf, zarr.Options{})
	if err != nil {
		return nil, nil, err
	}
	n, err := o.h.Node(ctx, path)
	if err != nil {
		err = o.errorf(path, err)
		o.close()
		return nil, nil, err
	}
	return o, n, nil
}

// errorf names the store and the node in err, unless the engine did.
func (o *opened) errorf(path string, err error) error {
	if strings.Contains(err.Error(), o.st.String()) {
		return err
	}
	return fmt.Errorf("%s: node %q: %w", o.st, "/"+strings.Trim(path, "/"), err)
}

// isRemote reports whether spec names an HTTP(S) or S3 store.
func isRemote(spec string) bool {
	scheme, _, ok := strings.Cut(spec, "://")
	if !ok {
		return false
	}
	switch strings.ToLower(scheme) {
	case "http", "https", "s3":
		return true
	}
	return false
}
