package storeurl

import (
	"context"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"strings"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/deadline"
	httpstore "github.com/zarrfs/zarrfs/store/http"
	"github.com/zarrfs/zarrfs/store/remote"
	"github.com/zarrfs/zarrfs/store/s3"
	"github.com/zarrfs/zarrfs/store/zip"
)

func (o Options) getenv(k string) string {
	if o.Getenv != nil {
		return o.Getenv(k)
	}
	return os.Getenv(k)
}

func (o Options) timeout() deadlineFunc {
	t := o.Timeout
	if t == 0 {
		t = DefaultTimeout
	}
	return func(s store.Store) store.Store { return deadline.New(s, t) }
}

type deadlineFunc func(store.Store) store.Store

// remote returns the remote store s, opened from the URL id names, as it
// is read: each request bounded by the timeout, and through the disk
// cache when there is one.
func (o Options) remote(s store.Store, id string) store.Store {
	st := o.timeout()(s)
	if o.Cache != nil {
		st = o.Cache.Wrap(st, id)
	}
	return st
}

// isZip reports whether a URL path names a zip archive.
func isZip(p string) bool { return strings.HasSuffix(strings.ToLower(p), ".zip") }

// openHTTP opens an http(s):// store, or a zip archive served over HTTP.
func openHTTP(ctx context.Context, spec string, opts Options) (store.Store, error) {
	if opts.Writable {
		return nil, fmt.Errorf("open store %s: HTTP stores are read-only: %w", spec, store.ErrReadOnly)
	}
	u, err := url.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", spec, err)
	}
	hopts := httpstore.Options{Retry: opts.Retry, Concurrency: opts.Concurrency, Logf: opts.Logf}
	if !isZip(u.Path) {
		s, err := httpstore.New(spec, hopts)
		if err != nil {
			return nil, err
		}
		return opts.remote(s, cacheID(u)), nil
	}
	// The archive is the key NAME of the store at its parent URL.
	dir, name := path.Split(u.Path)
	parent := *u
	parent.Path, parent.RawPath = dir, ""
	s, err := httpstore.New(parent.String(), hopts)
	if err != nil {
		return nil, err
	}
	label := u.Scheme + "://" + u.Host + u.Path
	return openZip(ctx, opts.remote(s, cacheID(&parent)), name, label)
}

// openS3 opens an s3://bucket/prefix store, or a zip archive in a bucket.
func openS3(ctx context.Context, spec string, opts Options) (store.Store, error) {
	bucket, prefix, err := s3.ParseURL(spec)
	if err != nil {
		return nil, err
	}
	so := s3.Options{
		Endpoint:    opts.S3.Endpoint,
		Region:      opts.S3.Region,
		PathStyle:   opts.S3.PathStyle,
		Anonymous:   opts.S3.Anonymous,
		ReadOnly:    !opts.Writable,
		Retry:       opts.Retry,
		Concurrency: opts.Concurrency,
		Logf:        opts.Logf,
	}
	if so.Endpoint == "" {
		so.Endpoint = opts.getenv("AWS_ENDPOINT_URL_S3")
	}
	if so.Endpoint == "" {
		so.Endpoint = opts.getenv("AWS_ENDPOINT_URL")
	}
	if so.Region == "" {
		so.Region = opts.getenv("AWS_REGION")
	}
	if so.Region == "" {
		so.Region = opts.getenv("AWS_DEFAULT_REGION")
	}
	if !so.Anonymous {
		so.AccessKey = opts.getenv("AWS_ACCESS_KEY_ID")
		so.SecretKey = opts.getenv("AWS_SECRET_ACCESS_KEY")
		so.SessionToken = opts.getenv("AWS_SESSION_TOKEN")
		if so.AccessKey != "" && so.SecretKey == "" {
			return nil, fmt.Errorf("open store %s: AWS_ACCESS_KEY_ID is set but AWS_SECRET_ACCESS_KEY is not", spec)
		}
	}
	if !isZip(prefix) {
		s, err := s3.New(bucket, prefix, so)
		if err != nil {
			return nil, err
		}
		return opts.remote(s, s3ID(so.Endpoint, bucket, prefix)), nil
	}
	if opts.Writable {
		return nil, fmt.Errorf("open store %s: zip archives open read-only: %w", spec, store.ErrReadOnly)
	}
	dir, name := path.Split(prefix)
	so.ReadOnly = true
	s, err := s3.New(bucket, strings.TrimSuffix(dir, "/"), so)
	if err != nil {
		return nil, err
	}
	dirPrefix := strings.TrimSuffix(dir, "/")
	return openZip(ctx, opts.remote(s, s3ID(so.Endpoint, bucket, dirPrefix)), name, "s3://"+bucket+"/"+prefix)
}

// cacheID names an HTTP store in the disk cache: its URL without
// credentials (which the cache's files would otherwise hold).
func cacheID(u *url.URL) string {
	c := *u
	c.User = nil
	return c.String()
}

// s3ID names an S3 store in the disk cache: its URL, and the endpoint
// when not AWS's (two servers may have buckets of one name).
func s3ID(endpoint, bucket, prefix string) string {
	id := "s3://" + bucket + "/" + prefix
	if endpoint != "" {
		id += " at " + endpoint
	}
	return id
}

// openZip opens the zip archive stored under key in st, reading its
// central directory and members with range requests.
func openZip(ctx context.Context, st store.Store, key, label string) (store.Store, error) {
	closeSt := func() {
		if c, ok := st.(io.Closer); ok {
			c.Close()
		}
	}
	stater, ok := st.(store.Stater)
	if !ok {
		closeSt()
		return nil, fmt.Errorf("open store %s: %s cannot tell the archive's size", label, st)
	}
	info, err := stater.Stat(ctx, key)
	if err != nil {
		closeSt()
		return nil, fmt.Errorf("open store %s: %w", label, err)
	}
	// Open reads the central directory through plain ReadAt, which uses
	// the reader's context: not ctx itself, since the reader outlives
	// Open (each read is bounded by st's deadline). Members are read under
	// their callers' contexts (ReadAtContext).
	r := remote.NewReaderAt(context.WithoutCancel(ctx), st, key, info.Size)
	z, err := zip.Open(r, info.Size, zip.Options{Name: label})
	if err != nil {
		closeSt()
		return nil, err
	}
	return &zipOver{Store: z, under: st}, nil
}

// zipOver is a zip store over a remote store; Close closes both.
type zipOver struct {
	*zip.Store
	under store.Store
}

func (z *zipOver) Close() error {
	err := z.Store.Close()
	if c, ok := z.under.(io.Closer); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}
