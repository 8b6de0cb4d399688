// Package s3 is the zarrfs store for a Zarr hierarchy in an S3 bucket (AWS
// or any S3-compatible server: MinIO, Ceph, versitygw, …): key K of the
// store s3://bucket/prefix is the object "prefix/K".
//
// It reads with GetObject (ranged reads with a Range header, including the
// suffix form bytes=-N for shard indexes), lists with ListObjectsV2 (with
// the delimiter "/" for ListDir, without for ListPrefix; every page of a
// listing is read), describes objects with HeadObject and, unless opened
// read-only, writes with PutObject and DeleteObject. A missing object is
// store.ErrNotExist; a missing bucket is an error that says so.
//
// The client is github.com/minio/minio-go/v7: a small, well-maintained S3
// client with signature V4, path-style and virtual-host addressing, session
// tokens and ListObjectsV2 pagination, and few dependencies (aws-sdk-go-v2
// does not resolve from the module proxy here). Its own retries are turned
// off: the store retries each whole operation (the request and the reading
// of its body) on transient failures with package remote's bounded
// backoff, inside the caller's deadline.
package s3

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/remote"
)

// Options configures New.
type Options struct {
	// Endpoint is the server's URL ("https://s3.eu-west-1.amazonaws.com",
	// "http://127.0.0.1:7070"); a bare host[:port] means https. Empty:
	// AWS (s3.amazonaws.com).
	Endpoint string
	// Region is the bucket's region; empty asks the server (AWS) or uses
	// us-east-1 (other endpoints).
	Region string
	// PathStyle addresses buckets as ENDPOINT/BUCKET instead of
	// BUCKET.ENDPOINT (most S3-compatible servers need it; with an IP
	// address or localhost it is the default).
	PathStyle bool
	// AccessKey, SecretKey and SessionToken are the credentials. With no
	// AccessKey and Anonymous unset, the AWS shared credentials file
	// (AWS_SHARED_CREDENTIALS_FILE, AWS_PROFILE) is tried, then anonymous
	// access.
	AccessKey, SecretKey, SessionToken string
	// Anonymous sends unsigned requests (public buckets).
	Anonymous bool
	// ReadOnly makes Set and Delete fail with store.ErrReadOnly.
	ReadOnly bool
	// Retry says how transient failures are retried.
	Retry remote.Policy
	// Concurrency is the most requests in flight; within it a
	// remote.Controller adapts the number to the store (0:
	// remote.DefaultCeiling).
	Concurrency int
	// Logf logs what the store should say once (throttling); nil: nothing.
	Logf func(format string, args ...any)
	// Transport sends the requests; nil: a transport of the store's own.
	Transport http.RoundTripper
	// ListPageSize is the most keys asked for per ListObjectsV2 page (0:
	// the server's default, 1000 on AWS).
	ListPageSize int
}

// Store is an S3 store. It implements store.Store, store.Lister,
// store.PageLister, store.Stater, store.Writer and io.Closer and is safe for concurrent use.
type Store struct {
	remote.Reads // Get, GetRange, GetRangeInfo, GetIfChanged: from read

	core     minio.Core
	bucket   string
	prefix   string // "" or ending in "/"
	name     string
	readOnly bool
	retry    remote.Policy
	ctl      *remote.Controller
	pageSize int
	own      *http.Transport

	// infos holds what answers said of keys (size, Last-Modified), so
	// that Stat after a read needs no request; Set and Delete forget a key.
	infos remote.Infos
}

var (
	_ store.Store      = (*Store)(nil)
	_ store.Lister     = (*Store)(nil)
	_ store.PageLister = (*Store)(nil)
	_ store.Stater     = (*Store)(nil)
	_ store.Writer     = (*Store)(nil)
	_ io.Closer        = (*Store)(nil)
)

// ParseURL splits s3://bucket/prefix into its bucket and prefix (without
// leading or trailing slashes).
func ParseURL(raw string) (bucket, prefix string, err error) {
	rest, ok := strings.CutPrefix(raw, "s3://")
	if !ok {
		if len(raw) >= 5 && strings.EqualFold(raw[:5], "s3://") {
			rest = raw[5:]
		} else {
			return "", "", fmt.Errorf("s3 store %s: not an s3:// URL", raw)
		}
	}
	bucket, prefix, _ = strings.Cut(rest, "/")
	prefix = strings.Trim(prefix, "/")
	if bucket == "" {
		return "", "", fmt.Errorf("s3 store %s: no bucket name", raw)
	}
	if prefix != "" {
		if err := store.ValidateKey(prefix); err != nil {
			return "", "", fmt.Errorf("s3 store %s: prefix: %w", raw, err)
		}
	}
	return bucket, prefix, nil
}

// New returns the store of the objects below prefix in bucket. It makes no
// request: a wrong endpoint, bucket or credentials show at the first read.
func New(bucket, prefix string, opts Options) (*Store, error) {
	name := "s3://" + bucket
	if prefix != "" {
		name += "/" + prefix
	}
	endpoint, secure := "s3.amazonaws.com", true
	if opts.Endpoint != "" {
		e := opts.Endpoint
		if !strings.Contains(e, "://") {
			e = "https://" + e
		}
		u, err := url.Parse(e)
		if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
			return nil, fmt.Errorf("s3 store %s: endpoint %q is not an http(s) URL or host[:port]", name, opts.Endpoint)
		}
		if u.Path != "" && u.Path != "/" {
			return nil, fmt.Errorf("s3 store %s: endpoint %q has a path; give the server only (the bucket goes in the s3:// URL)", name, opts.Endpoint)
		}
		endpoint, secure = u.Host, u.Scheme == "https"
		name += " at " + u.Scheme + "://" + u.Host
	}
	region := opts.Region
	if region == "" && opts.Endpoint != "" {
		region = "us-east-1"
	}
	var creds *credentials.Credentials
	switch {
	case opts.Anonymous:
		creds = credentials.NewStatic("", "", "", credentials.SignatureAnonymous)
	case opts.AccessKey != "":
		creds = credentials.NewStaticV4(opts.AccessKey, opts.SecretKey, opts.SessionToken)
	default:
		creds = credentials.NewChainCredentials([]credentials.Provider{
			&credentials.FileAWSCredentials{},
		})
	}
	if opts.Concurrency <= 0 {
		opts.Concurrency = remote.DefaultCeiling
	}
	s := &Store{bucket: bucket, name: "s3 " + name, readOnly: opts.ReadOnly, retry: opts.Retry,
		pageSize: opts.ListPageSize}
	s.ctl = remote.NewController(remote.ControllerOptions{Ceiling: opts.Concurrency, Name: s.name, Logf: opts.Logf})
	if prefix != "" {
		s.prefix = prefix + "/"
	}
	transport := opts.Transport
	if transport == nil {
		s.own = remote.NewTransport(opts.Concurrency)
		transport = s.own
	}
	lookup := minio.BucketLookupAuto
	if opts.PathStyle {
		lookup = minio.BucketLookupPath
	}
	c, err := minio.New(endpoint, &minio.Options{
		Creds: creds, Secure: secure, Region: region, BucketLookup: lookup,
		Transport: transport, MaxRetries: 1,
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", s, err)
	}
	s.core = minio.Core{Client: c}
	s.Reads = remote.NewReads(s, s.read)
	return s, nil
}

func (s *Store) String() string { return s.name }

// Close closes idle connections of the store's own transport.
func (s *Store) Close() error { return remote.CloseOwn(s.own) }

// object returns the object name of key.
func (s *Store) object(key string) string { return s.prefix + key }

// do runs op, each attempt with a request slot of the controller,
// retrying transient failures. op reports the bytes it received, and calls
// tk.FirstByte when the answer's headers arrive.
func (s *Store) do(ctx context.Context, op func(ctx context.Context, tk *remote.Ticket) (int64, error)) error {
	return remote.Do(ctx, s.retry, func(ctx context.Context) error {
		tk, err := s.ctl.Acquire(ctx)
		if err != nil {
			return err
		}
		n, err := op(ctx, tk)
		tk.Done(n, err)
		return err
	})
}

// wrap names the store and the operation in err and classifies it:
// ErrNotExist for a missing object, transient for 5xx and throttling.
func (s *Store) wrap(op string, err error) error {
	var er minio.ErrorResponse
	if !errors.As(err, &er) {
		if remote.IsTransient(err) {
			return remote.Transient(fmt.Errorf("%s: %s: %w", s, op, err))
		}
		return fmt.Errorf("%s: %s: %w", s, op, err)
	}
	switch {
	case er.Code == "NoSuchBucket":
		return fmt.Errorf("%s: %s: bucket %q does not exist (%s)", s, op, s.bucket, er.Message)
	case er.StatusCode == http.StatusNotFound || er.Code == "NoSuchKey":
		return fmt.Errorf("%s: %s: %w", s, op, store.ErrNotExist)
	case er.StatusCode >= 500 || er.StatusCode == http.StatusTooManyRequests || er.StatusCode == http.StatusRequestTimeout ||
		er.Code == "SlowDown" || er.Code == "Throttling" || er.Code == "ThrottlingException" ||
		er.Code == "RequestTimeout" || er.Code == "RequestLimitExceeded" || er.Code == "InternalError":
		throttled := er.StatusCode == http.StatusServiceUnavailable || er.StatusCode == http.StatusTooManyRequests ||
			er.Code == "SlowDown" || er.Code == "Throttling" || er.Code == "ThrottlingException" || er.Code == "RequestLimitExceeded"
		return &remote.TransientError{Err: fmt.Errorf("%s: %s: %s (HTTP %d)", s, op, er.Error(), er.StatusCode), Throttled: throttled}
	}
	return fmt.Errorf("%s: %s: %s (HTTP %d %s)", s, op, er.Error(), er.StatusCode, er.Code)
}

var _ store.InfoGetter = (*Store)(nil)

// read reads the range r of key (remote.ReadFunc), with retries.
func (s *Store) read(ctx context.Context, key string, r store.ByteRange, old *store.Info) ([]byte, store.Info, error) {
	op := "get " + key
	var opts minio.GetObjectOptions
	if r != store.All {
		op += " " + r.String()
		opts.Set("Range", r.String())
	}
	switch {
	case old == nil:
	case old.ETag != "":
		opts.SetMatchETagExcept(old.ETag)
	default:
		opts.SetModified(old.ModTime)
	}
	var out []byte
	in := store.Info{Size: -1}
	err := s.do(ctx, func(ctx context.Context, tk *remote.Ticket) (int64, error) {
		gen := s.infos.Generation()
		body, info, hdr, err := s.core.GetObject(ctx, s.bucket, s.object(key), opts)
		if err != nil {
			var er minio.ErrorResponse
			if errors.As(err, &er) && (er.StatusCode == http.StatusRequestedRangeNotSatisfiable || er.Code == "InvalidRange") {
				out = []byte{} // a range at or past the end, or of an empty object
				return 0, nil
			}
			if old != nil && errors.As(err, &er) && er.StatusCode == http.StatusNotModified {
				in = *old
				return 0, fmt.Errorf("%s: %s: %w", s, op, store.ErrNotModified)
			}
			return 0, s.wrap(op, err)
		}
		tk.FirstByte()
		defer body.Close()
		b, err := remote.ReadBody(body, info.Size)
		if err != nil {
			return 0, s.wrap(op, err)
		}
		if !r.Suffix && r.Length > 0 && int64(len(b)) > r.Length {
			b = b[:r.Length:r.Length]
		}
		out = b
		total := int64(len(b))
		if cr := hdr.Get("Content-Range"); cr != "" {
			total = -1
			if _, t, ok := strings.Cut(cr, "/"); ok {
				if n, err := strconv.ParseInt(t, 10, 64); err == nil && n >= 0 {
					total = n
				}
			}
		}
		if total >= 0 {
			in = store.Info{Size: total, ModTime: info.LastModified, ETag: info.ETag}
			s.infos.Remember(key, gen, in)
		}
		return int64(len(b)), nil
	})
	if err != nil {
		return nil, in, err
	}
	return out, in, nil // Size -1: a range past the end, or no whole size in the answer
}

// Stat describes the object of key: from an earlier answer when there was
// one, else with a HEAD request.
func (s *Store) Stat(ctx context.Context, key string) (store.Info, error) {
	return s.infos.Stat(ctx, key, func(ctx context.Context) (info store.Info, err error) {
		err = s.do(ctx, func(ctx context.Context, tk *remote.Ticket) (int64, error) {
			oi, err := s.core.StatObject(ctx, s.bucket, s.object(key), minio.StatObjectOptions{})
			if err != nil {
				return 0, s.wrap("stat "+key, err)
			}
			tk.FirstByte()
			if strings.HasSuffix(oi.Key, "/") {
				return 0, fmt.Errorf("%s: stat %s: %w", s, key, store.ErrNotExist)
			}
			info = store.Info{Size: oi.Size, ModTime: oi.LastModified, ETag: oi.ETag}
			return 0, nil
		})
		return info, err
	})
}

// list returns the keys and common prefixes below the object prefix p,
// relative to the store's prefix, reading every page.
// noOwner asks listings for no owner of each object (minio-go asks for
// it by default): only the keys are used, and the owners lengthen the
// answer the server makes and the client parses.
var noOwner = false

func (s *Store) list(ctx context.Context, op, p string, recursive bool) (keys, prefixes []string, err error) {
	err = s.do(ctx, func(ctx context.Context, tk *remote.Ticket) (int64, error) {
		keys, prefixes = nil, nil
		ctx, cancel := context.WithCancel(ctx)
		defer cancel() // stops the listing goroutine on an early return
		for oi := range s.core.Client.ListObjects(ctx, s.bucket, minio.ListObjectsOptions{
			Prefix: p, Recursive: recursive, MaxKeys: s.pageSize, FetchOwner: &noOwner,
		}) {
			if oi.Err != nil {
				return 0, s.wrap(op, oi.Err)
			}
			tk.FirstByte()
			rel, ok := strings.CutPrefix(oi.Key, s.prefix)
			if !ok {
				continue
			}
			if strings.HasSuffix(rel, "/") {
				if !recursive {
					prefixes = append(prefixes, rel)
				}
				continue // a common prefix, or a folder marker object
			}
			if store.ValidateKey(rel) == nil {
				keys = append(keys, rel)
			}
		}
		return 0, nil
	})
	return keys, prefixes, err
}

// ListDir returns the names of the objects and common prefixes directly
// under dir.
func (s *Store) ListDir(ctx context.Context, dir string) (keys, prefixes []string, err error) {
	if err := store.CheckListDir(ctx, dir); err != nil {
		return nil, nil, err
	}
	p := s.prefix
	if dir != "" {
		p += dir + "/"
	}
	rk, rp, err := s.list(ctx, "list "+dir+"/", p, false)
	if err != nil {
		return nil, nil, err
	}
	keys, prefixes = []string{}, []string{}
	strip := strings.TrimPrefix(p, s.prefix)
	for _, k := range rk {
		if name := strings.TrimPrefix(k, strip); name != "" && !strings.Contains(name, "/") {
			keys = append(keys, name)
		}
	}
	for _, k := range rp {
		name := strings.TrimSuffix(strings.TrimPrefix(k, strip), "/")
		if name != "" && !strings.Contains(name, "/") && store.ValidateKey(name) == nil {
			prefixes = append(prefixes, name)
		}
	}
	slices.Sort(keys)
	prefixes = slices.Compact(slices.Sorted(slices.Values(prefixes)))
	return keys, prefixes, nil
}

// ListPrefix returns every key that starts with prefix.
func (s *Store) ListPrefix(ctx context.Context, prefix string) ([]string, error) {
	if err := store.CheckListPrefix(ctx, prefix); err != nil {
		return nil, err
	}
	keys, _, err := s.list(ctx, "list "+prefix+"*", s.prefix+prefix, true)
	if err != nil {
		return nil, err
	}
	if keys == nil {
		keys = []string{}
	}
	slices.Sort(keys)
	return keys, nil
}

// listPage is the most keys ListPrefixPage asks for when the store sets
// no page size: what AWS answers at most.
const listPage = 1000

// ListPrefixPage returns the keys of one ListObjectsV2 page: the first
// that start with prefix and sort after startAfter. The listing is not
// continued past the page, so a full page reports more.
func (s *Store) ListPrefixPage(ctx context.Context, prefix, startAfter string) (keys []string, more bool, err error) {
	if err := store.CheckListPrefix(ctx, prefix); err != nil {
		return nil, false, err
	}
	size := s.pageSize
	if size <= 0 {
		size = listPage
	}
	err = s.do(ctx, func(ctx context.Context, tk *remote.Ticket) (int64, error) {
		keys, more = []string{}, false
		n := 0
		opts := minio.ListObjectsOptions{Prefix: s.prefix + prefix, Recursive: true, MaxKeys: size, FetchOwner: &noOwner}
		if startAfter != "" {
			opts.StartAfter = s.prefix + startAfter
		}
		// The iterator asks for the next page only when the loop goes on
		// past the first page's objects.
		for oi := range s.core.Client.ListObjectsIter(ctx, s.bucket, opts) {
			if oi.Err != nil {
				return 0, s.wrap("list "+prefix+"*", oi.Err)
			}
			tk.FirstByte()
			rel, ok := strings.CutPrefix(oi.Key, s.prefix)
			if ok && !strings.HasSuffix(rel, "/") && store.ValidateKey(rel) == nil {
				keys = append(keys, rel)
			}
			if n++; n == size {
				more = true // a full page: the next may hold more
				break
			}
		}
		return 0, nil
	})
	if err != nil {
		return nil, false, err
	}
	slices.Sort(keys)
	return keys, more, nil
}

// Set stores value under key with PutObject.
func (s *Store) Set(ctx context.Context, key string, value []byte) error {
	if err := store.CheckWrite(ctx, s, "set", key, s.readOnly); err != nil {
		return err
	}
	defer s.infos.Forget(key) // after the write too: a read racing with it may have kept the old value's
	s.infos.Forget(key)
	return s.do(ctx, func(ctx context.Context, tk *remote.Ticket) (int64, error) {
		_, err := s.core.PutObject(ctx, s.bucket, s.object(key), bytes.NewReader(value), int64(len(value)), "", "",
			minio.PutObjectOptions{ContentType: "application/octet-stream"})
		if err != nil {
			return 0, s.wrap("set "+key, err)
		}
		tk.FirstByte()
		return 0, nil
	})
}

// Delete removes the object of key; a missing one is not an error.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := store.CheckWrite(ctx, s, "delete", key, s.readOnly); err != nil {
		return err
	}
	defer s.infos.Forget(key)
	s.infos.Forget(key)
	return s.do(ctx, func(ctx context.Context, tk *remote.Ticket) (int64, error) {
		err := s.core.RemoveObject(ctx, s.bucket, s.object(key), minio.RemoveObjectOptions{})
		if err != nil {
			if err := s.wrap("delete "+key, err); !errors.Is(err, store.ErrNotExist) {
				return 0, err
			}
		}
		return 0, nil
	})
}

// Bucket returns the bucket name and Prefix the object prefix ("" or
// ending in "/").
func (s *Store) Bucket() string { return s.bucket }
func (s *Store) Prefix() string { return s.prefix }

// MakeBucket creates the store's bucket (for tests and for writing a new
// hierarchy); an existing bucket owned by the caller is not an error.
func (s *Store) MakeBucket(ctx context.Context) error {
	return s.do(ctx, func(ctx context.Context, tk *remote.Ticket) (int64, error) {
		err := s.core.MakeBucket(ctx, s.bucket, minio.MakeBucketOptions{})
		if err != nil {
			var er minio.ErrorResponse
			if errors.As(err, &er) && er.Code == "BucketAlreadyOwnedByYou" {
				return 0, nil
			}
			return 0, s.wrap("make bucket", err)
		}
		return 0, nil
	})
}
