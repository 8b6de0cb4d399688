package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"time"

	"github.com/spf13/pflag"

	"github.com/zarrfs/zarrfs/store"
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
	return &s
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
		Logf:        s.logf,

		AllowLocalRefs: s.refsAllowLocal,
	}
	if o.Logf == nil {
		o.Logf = log.New(os.Stderr, "zarrfs: ", 0).Printf
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
