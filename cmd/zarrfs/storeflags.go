package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/spf13/pflag"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/diskcache"
	"github.com/zarrfs/zarrfs/store/remote"
	"github.com/zarrfs/zarrfs/store/storeurl"
	"github.com/zarrfs/zarrfs/zarr"
	"github.com/zarrfs/zarrfs/zarr/example"
)

// storeFlags are the flags of the commands that open a store: how remote
// (HTTP, S3) stores are reached.
type storeFlags struct {
	timeout     time.Duration
	concurrency int
	retries     int
	s3          storeurl.S3Options
	// refsAllowLocal lets a Kerchunk reference set read over the network
	// name local files.
	refsAllowLocal bool
	// logf logs what a remote store says once (throttling); nil: standard
	// error. The mount sets its own logger.
	logf func(format string, args ...any)
	// ref is the branch, tag or snapshot of an Icechunk repository to
	// read (--ref); "" reads branch main, or, when whole is set (mount),
	// the whole repository: branches/, tags/, snapshots/.
	ref   string
	whole bool

	// The persistent disk cache of remote stores (--cache-dir): off when
	// cacheDir is empty. live is the mount's --live (revalidate what the
	// cache holds), set by the mount.
	cacheDir     string
	cacheDirSize sizeValue
	cacheOffline bool
	live         bool
	cacheMu      sync.Mutex
	cache        *diskcache.Cache // opened by the first options() that wants it
	cacheTried   bool
}

// storeFlagsFor registers the store flags on fl.
func storeFlagsFor(fl *pflag.FlagSet) *storeFlags {
	var s storeFlags
	fl.DurationVar(&s.timeout, "store-timeout", storeurl.DefaultTimeout,
		"longest wait for one request to a remote store, retries included; then the read fails (EIO) (0: no limit)")
	fl.IntVar(&s.concurrency, "store-concurrency", remote.DefaultCeiling,
		"most requests in flight to a remote store at once (the number adapts to the store's latency and throttling below it); also the chunks a read fetches at once")
	fl.IntVar(&s.retries, "store-retries", remote.DefaultAttempts-1,
		"times a failed remote request is retried (connection errors, 5xx, throttling), with backoff")
	fl.StringVar(&s.s3.Endpoint, "s3-endpoint", "", "S3 server URL, e.g. http://127.0.0.1:7070 (default: $AWS_ENDPOINT_URL, else AWS)")
	fl.StringVar(&s.s3.Region, "s3-region", "", "S3 region (default: $AWS_REGION)")
	fl.BoolVar(&s.s3.PathStyle, "s3-path-style", false, "address buckets as ENDPOINT/BUCKET rather than BUCKET.ENDPOINT")
	fl.BoolVar(&s.s3.Anonymous, "s3-anonymous", false, "send unsigned S3 requests (public buckets), ignoring any credentials")
	fl.StringVar(&s.ref, "ref", "", "of an Icechunk repository, the branch, tag or snapshot id to read (default: branch main; a mount without it shows them all)")
	fl.BoolVar(&s.refsAllowLocal, "refs-allow-local", false,
		"let a Kerchunk reference set read over HTTP or S3 name local files (file:// URLs, absolute paths); refused by default")
	fl.StringVar(&s.cacheDir, "cache-dir", "", "keep what remote (HTTP, S3) stores answer in this folder, for later reads and mounts (default: no disk cache)")
	s.cacheDirSize = diskcache.DefaultMaxSize
	fl.Var(&s.cacheDirSize, "cache-dir-size", "most bytes the --cache-dir folder holds (also at most half of its file system's free space); least recently used first out")
	fl.BoolVar(&s.cacheOffline, "cache-offline", false, "serve what --cache-dir holds when a remote store does not answer (within --store-timeout)")
	return &s
}

// diskCache returns the disk cache the flags ask for, opened at the first
// call; nil without --cache-dir or when its folder cannot be used (said
// once on the log: reads then go to the store).
func (s *storeFlags) diskCache() *diskcache.Cache {
	if s == nil || s.cacheDir == "" {
		return nil
	}
	s.cacheMu.Lock()
	defer s.cacheMu.Unlock()
	if !s.cacheTried {
		s.cacheTried = true
		c, err := diskcache.Open(s.cacheDir, diskcache.Options{
			MaxSize:    int64(s.cacheDirSize),
			Live:       s.live,
			Offline:    s.cacheOffline,
			Revalidate: isMetadataKey,
			Logf:       s.logger(),
		})
		if err != nil {
			s.logger()("%v: reading without a disk cache", err)
		}
		s.cache = c
	}
	return s.cache
}

// logger is where the store and the cache log.
func (s *storeFlags) logger() func(format string, args ...any) {
	if s.logf != nil {
		return s.logf
	}
	return log.New(os.Stderr, "zarrfs: ", 0).Printf
}

// isMetadataKey reports whether key names a metadata document (Zarr's of
// every version, and JSON documents such as Icechunk's refs or a Kerchunk
// reference file) or a zip archive (whose Stat a remote zip store asks
// first): what the disk cache checks with the store once per mount, so
// that a store rewritten since the last mount shows as it now is.
func isMetadataKey(key string) bool {
	base := path.Base(key)
	switch base {
	case ".zarray", ".zgroup", ".zattrs", ".zmetadata", "meta", "attrs":
		return true
	}
	return strings.HasSuffix(base, ".json") || strings.HasSuffix(strings.ToLower(base), ".zip")
}

// options returns the storeurl options the flags ask for (nil s: the
// defaults).
func (s *storeFlags) options() storeurl.Options {
	if s == nil {
		return storeurl.Options{}
	}
	o := storeurl.Options{
		Timeout:     s.timeout,
		Concurrency: s.concurrency,
		Retry:       remote.Policy{Attempts: max(s.retries, 0) + 1},
		S3:          s.s3,
		Logf:        s.logger(),
		Cache:       s.diskCache(),

		AllowLocalRefs: s.refsAllowLocal,
	}
	if o.Timeout == 0 {
		o.Timeout = -1 // the flag's 0 is "no limit"; storeurl reads 0 as the default
	}
	return o
}

// writeExampleS3 writes the example hierarchy into the empty S3 prefix
// spec names.
func writeExampleS3(ctx context.Context, spec string, sf *storeFlags) error {
	o := sf.options()
	o.Writable = true
	st, err := storeurl.Open(ctx, spec, o)
	if err != nil {
		return err
	}
	defer closeStore(st)
	w, ok := st.(zarr.WritableStore)
	l, ok2 := st.(store.Lister)
	if !ok || !ok2 {
		return fmt.Errorf("example: %s cannot be written", st)
	}
	if keys, err := l.ListPrefix(ctx, ""); err != nil {
		return fmt.Errorf("example: %w", err)
	} else if len(keys) > 0 {
		return fmt.Errorf("example: %s is not empty", st)
	}
	if err := example.Write(ctx, w); err != nil {
		return store.Errorf(st, err, "")
	}
	return nil
}
