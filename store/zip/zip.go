// Package zip is the zarrfs zip store: a Zarr hierarchy inside a .zip
// archive, read through an io.ReaderAt so that the archive can be a local
// file or, later, a remote object read with range requests.
//
// Keys are member names. Folder members (names ending in "/") and members
// whose name is not a valid key (store.ValidateKey: "../../x", "/etc/passwd",
// "a\b", …) are ignored: no key reaches them. When an archive holds the
// same name twice, the member that comes later in the central directory
// wins, as in Python's zipfile.
//
// Members may be Stored or Deflate-compressed. A range of a Stored member
// is read without reading the rest of the member; a range of a Deflate
// member decompresses up to its end, and a whole one is decoded in one
// call into a buffer of its declared size (internal/inflate). Whole reads
// are checked against the member's CRC-32. Reads of members honour the
// context, through ReadAtContext when the io.ReaderAt has it.
//
// A member's data follows its local header, whose length the central
// directory does not give. The first read of a member from its start reads
// the header and the data in one read of the io.ReaderAt (one request to a
// remote store, not two), sized as if the local header held the central
// directory's extra field; only when the local one is longer does a second
// read fetch what the first missed. The data's offset is then kept, so that
// later reads of a range read only the range.
//
// # Root folder
//
// Options.Prefix opens a folder of the archive as the store: keys are the
// member names below "Prefix/" with that part removed. With no Prefix the
// store detects one: when the archive's root holds none of zarr.json,
// .zgroup, .zarray and .zmetadata, but exactly one top-level folder holds
// one of them directly, that folder is used (archives made by zipping the
// folder data.zarr rather than its contents). Options.ExactRoot turns
// detection off.
package zip

import (
	archivezip "archive/zip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/klauspost/compress/flate"

	"github.com/zarrfs/zarrfs/internal/inflate"
	"github.com/zarrfs/zarrfs/store"
)

// Options configures Open and OpenFile.
type Options struct {
	// Name names the archive in String and errors; OpenFile sets it to the
	// file's absolute path.
	Name string
	// Prefix is the folder of the archive to open as the store ("data.zarr"),
	// without a trailing slash. Empty: detect it (see the package comment).
	Prefix string
	// ExactRoot uses the archive's root as the store's root when Prefix is
	// empty, with no detection.
	ExactRoot bool
}

// rootDocuments are the names whose presence marks a folder as a Zarr node
// for prefix detection.
var rootDocuments = []string{"zarr.json", ".zgroup", ".zarray", ".zmetadata"}

// maxDeflateRatio bounds how much larger than its compressed form a Deflate
// stream can be (1032:1), so a member claiming more is refused before any
// allocation.
const maxDeflateRatio = 1032

// member is one readable member of the archive.
type member struct {
	f      *archivezip.File
	header int64 // offset of the member's local header (see offsetProbe)
	// dataOff is the offset of the member's data once its local header
	// has been read and checked, -1 before.
	dataOff atomic.Int64
}

// Local file headers: the fixed part of one is localHeaderLen bytes,
// starting with localHeaderSig, with the lengths of the name and of the
// extra field that follow it at 26 and 28.
const (
	localHeaderLen = 30
	localHeaderSig = 0x04034b50
	// extraSlack is read past the data's expected end, so that a local
	// extra field a little longer than the central one (Info-ZIP's zip
	// writes 4 more bytes of timestamps there) costs no second read.
	extraSlack = 64
)

// offsetProbe is the io.ReaderAt the store gives archive/zip. It reads
// the archive until probing is set; from then on a read through it reads
// nothing and notes its offset. archive/zip does not tell where a member's
// local header is, but File.DataOffset reads the header there: calling it
// while probing tells the offset without a read, so that the store can
// read the header and the data together (Store.locate). The store reads
// nothing else through archive/zip once the central directory is read.
type offsetProbe struct {
	io.ReaderAt
	probing, asked bool
	at             int64
}

var errProbe = errors.New("zip: offset probe")

func (p *offsetProbe) ReadAt(b []byte, off int64) (int, error) {
	if !p.probing {
		return p.ReaderAt.ReadAt(b, off)
	}
	p.asked, p.at = true, off
	return 0, errProbe
}

// headerOffset returns the offset of f's local header (unchecked: a
// hostile one may be negative or beyond the archive's end).
func (p *offsetProbe) headerOffset(f *archivezip.File) (int64, error) {
	p.probing, p.asked = true, false
	if _, err := f.DataOffset(); !errors.Is(err, errProbe) || !p.asked {
		return 0, fmt.Errorf("archive/zip did not read %q's local header where the store can see it (%v)", f.Name, err)
	}
	return p.at, nil
}

// Store is a read-only zip store. It implements store.Store, store.Lister,
// store.Stater and io.Closer, and is safe for concurrent use when its
// io.ReaderAt is.
type Store struct {
	name    string
	r       io.ReaderAt
	size    int64
	prefix  string
	keys    []string // sorted
	members map[string]*member
	closer  io.Closer
}

var (
	_ store.Store  = (*Store)(nil)
	_ store.Lister = (*Store)(nil)
	_ store.Stater = (*Store)(nil)
	_ io.Closer    = (*Store)(nil)
)

// OpenFile opens the zip archive at path. Close closes the file.
func OpenFile(path string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("zip store %s: %w", path, err)
	}
	f, err := os.Open(abs)
	if err != nil {
		return nil, fmt.Errorf("zip store: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("zip store: %w", err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, fmt.Errorf("zip store %s: not a regular file", abs)
	}
	if opts.Name == "" {
		opts.Name = abs
	}
	s, err := Open(f, fi.Size(), opts)
	if err != nil {
		f.Close()
		return nil, err
	}
	s.closer = f
	return s, nil
}

// Open reads the central directory of the archive of the given size that r
// reads. The store reads members through r as needed; r must stay usable
// until the store is no longer used.
func Open(r io.ReaderAt, size int64, opts Options) (*Store, error) {
	name := opts.Name
	if name == "" {
		name = "(reader)"
	}
	probe := &offsetProbe{ReaderAt: r}
	zr, err := archivezip.NewReader(probe, size)
	if err != nil && !(errors.Is(err, archivezip.ErrInsecurePath) && zr != nil) {
		// With GODEBUG=zipinsecurepath=0 the reader is still usable; such
		// names are ignored below anyway.
		return nil, fmt.Errorf("zip store %s: %w", name, err)
	}

	all := make(map[string]*archivezip.File, len(zr.File))
	for _, f := range zr.File {
		if strings.HasSuffix(f.Name, "/") || store.ValidateKey(f.Name) != nil {
			continue
		}
		all[f.Name] = f // a later duplicate wins
	}
	prefix := strings.TrimSuffix(opts.Prefix, "/")
	if prefix != "" {
		if err := store.ValidateKey(prefix); err != nil {
			return nil, fmt.Errorf("zip store %s: prefix: %w", name, err)
		}
	} else if !opts.ExactRoot {
		prefix = detectPrefix(all)
	}
	s := &Store{name: name, r: r, size: size, prefix: prefix, members: make(map[string]*member, len(all))}
	if prefix != "" {
		s.name = fmt.Sprintf("%s (%s)", name, prefix)
	}
	for n, f := range all {
		key := n
		if prefix != "" {
			var ok bool
			if key, ok = strings.CutPrefix(n, prefix+"/"); !ok {
				continue
			}
		}
		h, err := probe.headerOffset(f)
		if err != nil {
			return nil, fmt.Errorf("zip store %s: %w", name, err)
		}
		m := &member{f: f, header: h}
		m.dataOff.Store(-1)
		s.members[key] = m
		s.keys = append(s.keys, key)
	}
	slices.Sort(s.keys)
	return s, nil
}

// detectPrefix returns the one top-level folder holding a Zarr document
// when the root holds none, and "" otherwise.
func detectPrefix(names map[string]*archivezip.File) string {
	for _, d := range rootDocuments {
		if names[d] != nil {
			return ""
		}
	}
	found := ""
	for n := range names {
		dir, doc, ok := strings.Cut(n, "/")
		if !ok || !slices.Contains(rootDocuments, doc) || dir == found {
			continue
		}
		if found != "" {
			return "" // more than one candidate
		}
		found = dir
	}
	return found
}

// String names the store: "zip /path/x.zip", with the prefix in
// parentheses when there is one.
func (s *Store) String() string { return "zip " + s.name }

// Prefix returns the folder of the archive the store shows ("" for the
// archive's root).
func (s *Store) Prefix() string { return s.prefix }

// Close closes the file that OpenFile opened; for Open it does nothing.
func (s *Store) Close() error {
	if s.closer == nil {
		return nil
	}
	return s.closer.Close()
}

func (s *Store) lookup(ctx context.Context, key string) (*member, error) {
	if err := store.CheckKey(ctx, key); err != nil {
		return nil, err
	}
	m := s.members[key]
	if m == nil {
		return nil, fmt.Errorf("%s: %q: %w", s, key, store.ErrNotExist)
	}
	return m, nil
}

// Stat returns the uncompressed size and modification time of member key.
func (s *Store) Stat(ctx context.Context, key string) (store.Info, error) {
	m, err := s.lookup(ctx, key)
	if err != nil {
		return store.Info{}, err
	}
	size, err := s.memberSize(key, m)
	if err != nil {
		return store.Info{}, err
	}
	return store.Info{Size: size, ModTime: m.f.Modified}, nil
}

// memberSize returns the member's uncompressed size after checking that it
// is plausible for its method and the archive's size, so that reads can
// allocate it.
func (s *Store) memberSize(key string, m *member) (int64, error) {
	f := m.f
	if f.UncompressedSize64 > math.MaxInt64 || f.CompressedSize64 > uint64(s.size) {
		return 0, fmt.Errorf("%s: %q: member sizes exceed the archive: %w", s, key, archivezip.ErrFormat)
	}
	switch f.Method {
	case archivezip.Store:
		if f.UncompressedSize64 != f.CompressedSize64 {
			return 0, fmt.Errorf("%s: %q: stored member with compressed size %d != size %d: %w",
				s, key, f.CompressedSize64, f.UncompressedSize64, archivezip.ErrFormat)
		}
	case archivezip.Deflate:
		if f.UncompressedSize64/maxDeflateRatio > f.CompressedSize64+1 {
			return 0, fmt.Errorf("%s: %q: deflate member claims %d bytes from %d: %w",
				s, key, f.UncompressedSize64, f.CompressedSize64, archivezip.ErrFormat)
		}
	default:
		return 0, fmt.Errorf("%s: %q: compression method %d: %w", s, key, f.Method, archivezip.ErrAlgorithm)
	}
	return int64(f.UncompressedSize64), nil
}

// Get returns the uncompressed contents of member key, checked against its
// CRC-32.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	return s.GetRange(ctx, key, store.All)
}

// GetRange returns the part of member key that r selects. For a Stored
// member only that part is read.
func (s *Store) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	m, err := s.lookup(ctx, key)
	if err != nil {
		return nil, err
	}
	size, err := s.memberSize(key, m)
	if err != nil {
		return nil, err
	}
	start, end, err := r.Resolve(size)
	if err != nil {
		return nil, fmt.Errorf("%s: %q: %w", s, key, err)
	}
	whole := start == 0 && end == size
	if m.f.Method == archivezip.Store {
		return s.readStored(ctx, key, m, start, end, whole)
	}
	return s.readDeflate(ctx, key, m, start, end, whole)
}

// locate reads member m's local header and, in the same read, the first
// span bytes of its data: the read runs from the header through the data's
// end as the central directory foretells it (30 bytes, the name, the
// central extra field, which most writers also write in the local header,
// and span), plus extraSlack. It checks the header as archive/zip does,
// records where the data starts, and returns that offset with the bytes of
// data read (at most span; fewer when the local extra field is longer than
// foretold).
func (s *Store) locate(ctx context.Context, key string, m *member, span int64) (int64, []byte, error) {
	h := m.header
	if h < 0 || h > s.size-localHeaderLen {
		return 0, nil, fmt.Errorf("%s: %q: local header beyond the archive's end: %w", s, key, archivezip.ErrFormat)
	}
	guess := localHeaderLen + int64(len(m.f.Name)) + int64(len(m.f.Extra))
	buf := make([]byte, min(guess+span+extraSlack, s.size-h))
	if n, err := (ctxReaderAt{ctx, s.r}).ReadAt(buf, h); n < len(buf) {
		return 0, nil, s.readError(ctx, key, err)
	}
	if binary.LittleEndian.Uint32(buf) != localHeaderSig {
		return 0, nil, fmt.Errorf("%s: %q: no local header at %d: %w", s, key, h, archivezip.ErrFormat)
	}
	body := localHeaderLen + int64(binary.LittleEndian.Uint16(buf[26:])) + int64(binary.LittleEndian.Uint16(buf[28:]))
	off := h + body
	if off > s.size || int64(m.f.CompressedSize64) > s.size-off { // memberSize checked it fits in the archive
		return 0, nil, fmt.Errorf("%s: %q: member data beyond the archive's end: %w", s, key, archivezip.ErrFormat)
	}
	m.dataOff.Store(off)
	data := buf[min(body, int64(len(buf))):]
	return off, data[:min(int64(len(data)), span)], nil
}

// dataOffset returns the offset of member m's data, reading its local
// header the first time.
func (s *Store) dataOffset(ctx context.Context, key string, m *member) (int64, error) {
	if off := m.dataOff.Load(); off >= 0 {
		return off, nil
	}
	off, _, err := s.locate(ctx, key, m, 0)
	return off, err
}

// readData returns bytes [start, end) of member m's stored (possibly
// compressed) data: with one read of the archive, which also reads the
// local header when it is the member's first read from its start, and a
// second one only for what that read missed.
func (s *Store) readData(ctx context.Context, key string, m *member, start, end int64) ([]byte, error) {
	off := m.dataOff.Load()
	var got []byte
	if off < 0 {
		span := int64(0)
		if start == 0 {
			span = end
		}
		var err error
		if off, got, err = s.locate(ctx, key, m, span); err != nil {
			return nil, err
		}
		if int64(len(got)) == end-start {
			return got, nil
		}
	}
	buf := make([]byte, end-start)
	k := copy(buf, got)
	if n, err := (ctxReaderAt{ctx, s.r}).ReadAt(buf[k:], off+start+int64(k)); n < len(buf)-k {
		return nil, s.readError(ctx, key, err)
	}
	return buf, nil
}

func (s *Store) readStored(ctx context.Context, key string, m *member, start, end int64, whole bool) ([]byte, error) {
	buf, err := s.readData(ctx, key, m, start, end)
	if err != nil {
		return nil, err
	}
	if whole && crc32.ChecksumIEEE(buf) != m.f.CRC32 {
		return nil, fmt.Errorf("%s: %q: %w", s, key, archivezip.ErrChecksum)
	}
	return buf, nil
}

// flateReaders holds Deflate decompressors for reuse.
var flateReaders sync.Pool

func (s *Store) readDeflate(ctx context.Context, key string, m *member, start, end int64, whole bool) ([]byte, error) {
	if whole {
		return s.inflateWhole(ctx, key, m, end)
	}
	off, err := s.dataOffset(ctx, key, m)
	if err != nil {
		return nil, err
	}
	sec := io.NewSectionReader(ctxReaderAt{ctx, s.r}, off, int64(m.f.CompressedSize64))
	var fr io.ReadCloser
	if v := flateReaders.Get(); v != nil {
		fr = v.(io.ReadCloser)
		if err := fr.(flate.Resetter).Reset(sec, nil); err != nil {
			return nil, fmt.Errorf("%s: %q: %w", s, key, err)
		}
	} else {
		fr = flate.NewReader(sec)
	}
	defer flateReaders.Put(fr)
	if start > 0 {
		if _, err := io.CopyN(io.Discard, fr, start); err != nil {
			return nil, s.readError(ctx, key, err)
		}
	}
	buf := make([]byte, end-start)
	if _, err := io.ReadFull(fr, buf); err != nil {
		return nil, s.readError(ctx, key, err)
	}
	return buf, nil
}

// inflateWhole reads the whole of Deflate member key, size bytes, from
// its compressed bytes in one call (package inflate: into a buffer of that
// size, which a stream of more cannot overrun), and checks its length and
// CRC-32.
func (s *Store) inflateWhole(ctx context.Context, key string, m *member, size int64) ([]byte, error) {
	comp, err := s.readData(ctx, key, m, 0, int64(m.f.CompressedSize64))
	if err != nil {
		return nil, err
	}
	buf := make([]byte, size)
	n, _, err := inflate.Decode(buf, comp)
	switch {
	case errors.Is(err, inflate.ErrTooLong):
		return nil, fmt.Errorf("%s: %q: more data than the declared %d bytes: %w", s, key, len(buf), archivezip.ErrFormat)
	case err != nil:
		return nil, fmt.Errorf("%s: %q: %w: %w", s, key, err, archivezip.ErrFormat)
	case n < len(buf):
		return nil, fmt.Errorf("%s: %q: %d bytes, not the declared %d: %w", s, key, n, len(buf), io.ErrUnexpectedEOF)
	case crc32.ChecksumIEEE(buf) != m.f.CRC32:
		return nil, fmt.Errorf("%s: %q: %w", s, key, archivezip.ErrChecksum)
	}
	return buf, nil
}

// readError wraps the error of a read that came up short: the context's
// error when it was cancelled, io.ErrUnexpectedEOF for an early end.
func (s *Store) readError(ctx context.Context, key string, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%s: %q: %w", s, key, err)
}

// ReaderAtContext is an io.ReaderAt that can also read under a context,
// such as one reading a remote object with range requests. The store uses
// ReadAtContext for member data when its reader implements it, so a
// cancelled context stops a read in flight.
type ReaderAtContext interface {
	io.ReaderAt
	ReadAtContext(ctx context.Context, p []byte, off int64) (int, error)
}

// ctxReaderAt reads from r under ctx.
type ctxReaderAt struct {
	ctx context.Context
	r   io.ReaderAt
}

func (c ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	if r, ok := c.r.(ReaderAtContext); ok {
		return r.ReadAtContext(c.ctx, p, off)
	}
	return c.r.ReadAt(p, off)
}

// span returns the sorted keys that start with p.
func (s *Store) span(p string) []string {
	i := sort.SearchStrings(s.keys, p)
	j := i
	for j < len(s.keys) && strings.HasPrefix(s.keys[j], p) {
		j++
	}
	return s.keys[i:j]
}

// ListDir returns the members directly in the folder dir and the folders
// below it, from the member names.
func (s *Store) ListDir(ctx context.Context, dir string) (keys, prefixes []string, err error) {
	if err := store.CheckListDir(ctx, dir); err != nil {
		return nil, nil, err
	}
	keys, prefixes = store.DirEntries(dir, slices.Values(s.span(store.DirPrefix(dir))))
	return keys, prefixes, nil
}

// ListPrefix returns every key that starts with prefix, sorted.
func (s *Store) ListPrefix(ctx context.Context, prefix string) ([]string, error) {
	if err := store.CheckListPrefix(ctx, prefix); err != nil {
		return nil, err
	}
	return append([]string{}, s.span(prefix)...), nil
}
