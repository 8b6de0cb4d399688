package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"strings"
	"sync/atomic"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/diskcache"
	"github.com/zarrfs/zarrfs/store/icechunk"
	"github.com/zarrfs/zarrfs/store/kerchunk"
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
	// cache is the disk cache st reads through (--cache-dir on a remote
	// store), or nil.
	cache *diskcache.Cache
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
	if sf != nil && opts.Logf == nil {
		// What the engine has to say (a --live mount serving stale
		// chunks) goes where the store's own notes go: the mount's log.
		opts.Logf = sf.logf
	}
	st, err := openStore(ctx, spec, sf)
	if err != nil {
		return nil, err
	}
	if opts.Logf == nil {
		// The one line saying consolidated metadata is over its limit.
		opts.Logf = sf.options().Logf
	}
	o := &opened{spec: spec, st: st, opts: opts}
	_, isRepo := st.(*icechunk.Tree)
	if !isRepo && sf != nil && sf.ref != "" {
		// storeurl.Open looks for an Icechunk repository on local disks
		// only: a remote one is looked for when it matters.
		if err := o.findRepo(ctx, sf); err != nil {
			return nil, err
		}
		if o.repo == nil {
			closeStore(st)
			return nil, fmt.Errorf("%s: --ref %s: not an Icechunk repository", st, sf.ref)
		}
	} else if err := o.useRepo(ctx, sf); err != nil {
		return nil, err
	}
	if r, ok := o.st.(interface{ Remote() bool }); ok && r.Remote() && !opts.Remote {
		// A local reference set whose chunks are in remote files.
		opts.Remote = true
		if sf != nil && opts.Concurrency == 0 {
			opts.Concurrency = sf.concurrency
		}
		o.opts = opts
	}
	o.h, err = zarr.Open(ctx, o.st, opts)
	if errors.Is(err, zarr.ErrNotExist) && o.repo == nil {
		// No Zarr hierarchy at the root: perhaps a remote Icechunk
		// repository.
		if ferr := o.findRepo(ctx, sf); ferr != nil {
			return nil, ferr
		}
		if o.repo != nil {
			o.h, err = zarr.Open(ctx, o.st, opts)
		} else if isRemote(spec) {
			// Or a JSON reference file whose name does not end in .json.
			if rs, ok, _ := storeurl.RemoteRefs(ctx, spec, sf.options()); ok {
				closeStore(o.st)
				o.st = rs
				o.h, err = zarr.Open(ctx, o.st, opts)
			}
		}
	}
	if err != nil {
		o.close()
		return nil, store.Errorf(o.st, err, "")
	}
	if err := o.findRefs(ctx, sf); err != nil {
		return nil, err
	}
	if opts.Remote {
		o.cache = sf.diskCache()
	}
	return o, nil
}

// findRefs reopens a remote store as the Kerchunk Parquet reference
// directory its root's .zmetadata (already read) says it is: storeurl.Open
// looks for one only under a name ending in .parq or .parquet, and read
// as a plain store its chunks would be missing keys, the fill value. On
// error everything is closed.
func (o *opened) findRefs(ctx context.Context, sf *storeFlags) error {
	if !isRemote(o.spec) || o.repo != nil {
		return nil
	}
	if _, ok := o.st.(interface{ Remote() bool }); ok {
		return nil // a reference set already
	}
	index, ok := o.h.Prefetched(".zmetadata")
	if !ok || !kerchunk.IsParquetIndex(index) {
		return nil
	}
	st, err := storeurl.KerchunkParquet(o.spec, o.st, index, sf.options())
	if err != nil {
		o.close()
		return err
	}
	h, err := zarr.Open(ctx, st, o.opts)
	if err != nil {
		closeStore(st)
		return fmt.Errorf("%s: %w", st, err)
	}
	o.st, o.h = st, h
	return nil
}

// findRepo looks for an Icechunk repository in o.st (which storeurl.Open
// looked at only if local) and, if there is one, uses it (useRepo). On
// error the store is closed.
func (o *opened) findRepo(ctx context.Context, sf *storeFlags) error {
	st, err := storeurl.Icechunk(ctx, o.spec, o.st, sf.options())
	if err != nil {
		closeStore(o.st)
		return err
	}
	o.st = st
	return o.useRepo(ctx, sf)
}

// useRepo sets o up to read the Icechunk repository o.st is, if it is
// one: the snapshot --ref names (default main), or, for a mount without
// --ref, the whole repository. On error the repository is closed.
func (o *opened) useRepo(ctx context.Context, sf *storeFlags) error {
	tree, ok := o.st.(*icechunk.Tree)
	if !ok {
		return nil
	}
	o.repo = tree
	if sf != nil && sf.whole && sf.ref == "" {
		return nil
	}
	o.ref = "main"
	if sf != nil && sf.ref != "" {
		o.ref = sf.ref
	}
	s, err := tree.Repo().Ref(ctx, o.ref)
	if err != nil {
		tree.Close()
		return err
	}
	o.st = s
	return nil
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

// rootInfo returns what the root's info.txt says of the layers below the
// engine: the disk cache's hit rate (nil: nothing).
func (o *opened) rootInfo() func() string {
	if o.cache == nil {
		return nil
	}
	return o.cache.StatsLine
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

// openServed opens STORE for a front end that serves it until told to
// stop, the mount or `zarrfs serve`: the whole of an Icechunk repository
// (branches/, tags/, snapshots/) unless --ref names one, live when --live
// says so, and SIGINT or SIGTERM while the store is being opened stop it
// (see cancelOnSignal, whose env it returns).
func openServed(ctx context.Context, e *env, spec string, sf *storeFlags, mf *mountFlags, logger *log.Logger) (*opened, *env, error) {
	sf.logf = logger.Printf
	sf.whole = true
	sf.live = mf.live > 0
	openCtx, e, done := cancelOnSignal(ctx, e)
	o, err := openHierarchy(openCtx, spec, sf, mf.options())
	done()
	if err != nil {
		if cause := context.Cause(openCtx); cause != nil {
			return nil, e, fmt.Errorf("%v while opening %s: stopped", cause, spec)
		}
		return nil, e, err
	}
	return o, e, nil
}

// cancelOnSignal returns a context that SIGINT or SIGTERM cancels until
// opened is called, so that a store that does not answer (with no
// --store-timeout) does not hold the command after it is told to stop, and
// an env whose signals are e's: each signal also goes on to serve.
func cancelOnSignal(ctx context.Context, e *env) (_ context.Context, _ *env, opened func()) {
	if e.signals == nil {
		return ctx, e, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	var opening atomic.Bool
	opening.Store(true)
	fwd := make(chan os.Signal, 2)
	go func() {
		for sig := range e.signals {
			if opening.Load() {
				cancel(fmt.Errorf("%v", sig))
			}
			select {
			case fwd <- sig:
			default:
			}
		}
	}()
	e2 := *e
	e2.signals = fwd
	return ctx, &e2, func() { opening.Store(false) }
}
