package storeurl

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/zarrfs/zarrfs/store"
	"github.com/zarrfs/zarrfs/store/dir"
	"github.com/zarrfs/zarrfs/store/kerchunk"
)

// Kerchunk reference sets are detected by their content: a local file
// whose first non-blank byte is "{" is read as a JSON reference file, a
// folder whose .zmetadata has kerchunk's "record_size" as a Parquet
// reference directory. A remote one is looked at when its name says it
// may be one (a path ending in .json, .parq or .parquet, or .json.gz,
// .json.bz2, .json.zst, .json.xz), so that opening a plain remote Zarr
// store costs no extra request. A JSON reference file may be compressed
// (gzip, bzip2, zstd, xz: kerchunk.Decompress, told by its magic bytes
// whatever its name) as fsspec reads it; it is decompressed within
// MaxReferenceFile.

// MaxReferenceFile bounds the size of a JSON reference file.
const MaxReferenceFile = 1 << 30

// isRefsJSONName and isRefsParquetName tell the remote paths worth a look.
func isRefsJSONName(p string) bool {
	p = strings.ToLower(p)
	for _, ext := range []string{".gz", ".bz2", ".zst", ".xz"} {
		p = strings.TrimSuffix(p, ext)
	}
	return strings.HasSuffix(p, ".json")
}

// refsJSON returns data decompressed when it is a compressed file, and
// whether it then looks like a JSON reference file (its first non-blank
// byte "{"; with an error: a compressed file that began as one).
func refsJSON(data []byte) ([]byte, bool, error) {
	compressed := kerchunk.Compression(data) != ""
	if compressed { // a look first: a compressed file of something else is not expanded whole
		if t := bytes.TrimLeft(kerchunk.Head(data, 512), " \t\r\n"); len(t) == 0 || t[0] != '{' {
			return nil, false, nil
		}
	}
	data, err := kerchunk.Decompress(data, MaxReferenceFile)
	if err != nil {
		return nil, true, fmt.Errorf("a compressed reference file: %w", err)
	}
	t := bytes.TrimLeft(data, " \t\r\n")
	return data, len(t) > 0 && t[0] == '{', nil
}

func isRefsParquetName(p string) bool {
	p = strings.ToLower(strings.TrimSuffix(p, "/"))
	return strings.HasSuffix(p, ".parq") || strings.HasSuffix(p, ".parquet")
}

// refsOptions returns the kerchunk options for a reference set at base.
func (o Options) refsOptions(name string, base *url.URL) kerchunk.Options {
	return kerchunk.Options{Name: name, Base: base, AllowLocal: o.AllowLocalRefs, Open: o.refsOpener()}
}

// refsOpener opens the stores that references point into, as the
// command line would open them (remote ones under the same timeout,
// retries and limits): openReferenced, as for Icechunk's virtual chunks.
func (o Options) refsOpener() kerchunk.Opener {
	return func(ctx context.Context, root *url.URL) (store.Store, error) {
		return o.openReferenced(ctx, root.String())
	}
}

// sniffLocalRefs reads the local regular file p as a JSON reference file
// when it looks like one (ok false: it does not; try it as something else).
func sniffLocalRefs(p string, opts Options) (st store.Store, ok bool, err error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, false, err
	}
	defer f.Close()
	head := make([]byte, 512)
	n, _ := io.ReadFull(f, head)
	compressed := kerchunk.Compression(head[:n]) != ""
	if t := bytes.TrimLeft(head[:n], " \t\r\n"); !compressed && (len(t) == 0 || t[0] != '{') {
		return nil, false, nil
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, true, err
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxReferenceFile+1))
	if err != nil {
		return nil, true, fmt.Errorf("open store %s: %w", p, err)
	}
	if len(data) > MaxReferenceFile {
		return nil, true, fmt.Errorf("open store %s: a reference file over %d bytes", p, MaxReferenceFile)
	}
	if compressed {
		var isJSON bool
		data, isJSON, err = refsJSON(data)
		if err != nil {
			return nil, true, fmt.Errorf("open store %s: %w", p, err)
		}
		if !isJSON {
			return nil, false, nil // a compressed file of something else
		}
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, true, err
	}
	s, err := kerchunk.OpenJSON(data, opts.refsOptions(p, &url.URL{Scheme: "file", Path: filepath.ToSlash(abs)}))
	if err != nil {
		return nil, true, fmt.Errorf("open store %s: neither a directory, a zip archive nor a Kerchunk reference file: %w", p, err)
	}
	return s, true, nil
}

// sniffWindow is how much of each end of a large .zmetadata
// sniffParquetRefs reads first: a Parquet reference index names
// "record_size" beside its "metadata" object, before it or after it.
const sniffWindow = 4 << 10

// sniffParquetRefs opens st, a folder store, as a Parquet reference
// directory when its .zmetadata says it is one (ok false: it is not).
// base is the folder's URL and name its name for messages. A .zmetadata
// larger than two windows is read whole only when one of its ends names
// "record_size": the consolidated metadata of a large hierarchy (tens of
// megabytes) is not read a second time before Open reads it.
func sniffParquetRefs(ctx context.Context, st store.Store, name string, base *url.URL, opts Options) (store.Store, bool, error) {
	if s, ok := st.(store.Stater); ok {
		info, err := s.Stat(ctx, ".zmetadata")
		switch {
		case errors.Is(err, store.ErrNotExist):
			return nil, false, nil
		case err == nil && info.Size > 2*sniffWindow:
			head, herr := st.GetRange(ctx, ".zmetadata", store.Range(0, sniffWindow))
			tail, terr := st.GetRange(ctx, ".zmetadata", store.SuffixRange(sniffWindow))
			if herr == nil && terr == nil && !kerchunk.MayBeParquetIndex(head) && !kerchunk.MayBeParquetIndex(tail) {
				return nil, false, nil
			}
		}
	}
	b, err := st.GetRange(ctx, ".zmetadata", store.Range(0, kerchunk.MaxParquetFile+1))
	if errors.Is(err, store.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !kerchunk.IsParquetIndex(b) {
		return nil, false, nil
	}
	base.Path = strings.TrimSuffix(base.Path, "/")
	ks, err := kerchunk.OpenParquet(b, st, opts.refsOptions(name, base))
	if err != nil {
		return nil, true, err
	}
	return &refsOver{Store: ks, under: st}, true, nil
}

// openRemoteRefs opens the reference set at the http(s):// or s3:// URL
// spec, whose path p ends in .json, .parq or .parquet.
func openRemoteRefs(ctx context.Context, spec, p string, opts Options) (store.Store, error) {
	u, err := url.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", spec, err)
	}
	base := *u
	base.User, base.RawQuery = nil, ""
	name := base.String()
	if isRefsParquetName(p) {
		st, err := openPlain(ctx, spec, opts)
		if err != nil {
			return nil, err
		}
		ks, ok, err := sniffParquetRefs(ctx, st, name, &base, opts)
		if err != nil || !ok {
			closeIt(st)
			if err == nil {
				err = errors.New("no .zmetadata with kerchunk's record_size")
			}
			return nil, fmt.Errorf("open store %s: not a Parquet reference directory: %w", spec, err)
		}
		return ks, nil
	}
	s, _, err := openRemoteJSON(ctx, spec, p, &base, opts)
	return s, err
}

// RemoteRefs opens the http(s):// or s3:// URL spec as a JSON reference
// file when what it holds is one (ok false: it is not). Open looks at a
// remote file only when its name ends in .json; the CLI calls this when
// no Zarr hierarchy was found at spec.
func RemoteRefs(ctx context.Context, spec string, opts Options) (st store.Store, ok bool, err error) {
	u, err := url.Parse(spec)
	if err != nil || u.Path == "" || strings.HasSuffix(u.Path, "/") {
		return nil, false, nil
	}
	base := *u
	base.User, base.RawQuery = nil, ""
	s, sniffed, err := openRemoteJSON(ctx, spec, u.Path, &base, opts)
	if !sniffed {
		return nil, false, nil
	}
	return s, err == nil, err
}

// openRemoteJSON opens the JSON reference file at spec (whose path is p);
// sniffed is false when the file is not there or does not start with "{".
func openRemoteJSON(ctx context.Context, spec, p string, base *url.URL, opts Options) (st store.Store, sniffed bool, err error) {
	name := base.String()
	// A JSON file: the key NAME of the store at its parent URL.
	parentSpec, fileName := spec[:strings.LastIndex(spec, "/")+1], path.Base(p)
	if q := strings.IndexByte(spec, '?'); q >= 0 { // a signed URL's query stays with it
		parentSpec = spec[:strings.LastIndex(spec[:q], "/")+1] + spec[q:]
	}
	parent, err := openPlain(ctx, parentSpec, opts)
	if err != nil {
		return nil, false, err
	}
	defer closeIt(parent)
	data, err := parent.GetRange(ctx, fileName, store.Range(0, MaxReferenceFile+1))
	if err != nil {
		return nil, false, fmt.Errorf("open store %s: %w", spec, err)
	}
	if len(data) > MaxReferenceFile {
		return nil, true, fmt.Errorf("open store %s: a reference file over %d bytes", spec, MaxReferenceFile)
	}
	data, isJSON, err := refsJSON(data)
	if err != nil {
		return nil, isJSON, fmt.Errorf("open store %s: %w", spec, err)
	}
	if !isJSON {
		return nil, false, fmt.Errorf("open store %s: not a JSON reference file", spec)
	}
	s, err := kerchunk.OpenJSON(data, opts.refsOptions(name, base))
	if err != nil {
		return nil, true, fmt.Errorf("open store %s: %w", spec, err)
	}
	return s, true, nil
}

// openPlain opens the http(s):// or s3:// URL spec as a plain store.
func openPlain(ctx context.Context, spec string, opts Options) (store.Store, error) {
	if strings.HasPrefix(strings.ToLower(spec), "s3://") {
		return openS3(ctx, spec, opts)
	}
	return openHTTP(ctx, spec, opts)
}

func closeIt(st store.Store) {
	if c, ok := st.(io.Closer); ok {
		c.Close()
	}
}

// refsOver is a Parquet reference set over the store of its folder;
// Close closes both.
type refsOver struct {
	*kerchunk.Store
	under store.Store
}

func (r *refsOver) Close() error {
	err := r.Store.Close()
	if c, ok := r.under.(io.Closer); ok {
		if cerr := c.Close(); err == nil {
			err = cerr
		}
	}
	return err
}

// localRefsDir returns the Parquet reference set in the local folder
// store st when it holds one, else st itself.
func localRefsDir(ctx context.Context, st *dir.Store, p string, opts Options) (store.Store, error) {
	refs, ok, err := sniffParquetRefs(ctx, st, p, &url.URL{Scheme: "file", Path: filepath.ToSlash(st.Path())}, opts)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("open store %s: %w", p, err)
	}
	if !ok {
		return st, nil
	}
	return refs, nil
}

// remotePath returns the path of an http(s):// URL or the prefix of an
// s3:// one ("" when spec does not parse).
func remotePath(spec string) string {
	u, err := url.Parse(spec)
	if err != nil {
		return ""
	}
	return u.Path
}

// KerchunkParquet returns the Parquet reference directory held by st, the
// plain remote store Open opened for spec, whose .zmetadata is index (the
// caller read it: see kerchunk.IsParquetIndex). Open looks at a remote
// store for one only when its name ends in .parq or .parquet; the CLI
// calls this when a remote store's .zmetadata says it is one all the same.
// Closing the store returned closes st.
func KerchunkParquet(spec string, st store.Store, index []byte, opts Options) (store.Store, error) {
	u, err := url.Parse(spec)
	if err != nil {
		return nil, fmt.Errorf("open store %s: %w", spec, err)
	}
	base := *u
	base.User, base.RawQuery = nil, ""
	base.Path = strings.TrimSuffix(base.Path, "/")
	ks, err := kerchunk.OpenParquet(index, st, opts.refsOptions(base.String(), &base))
	if err != nil {
		return nil, err
	}
	return &refsOver{Store: ks, under: st}, nil
}
