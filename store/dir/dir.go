// Package dir is the zarrfs directory store: each key is a file below a root
// directory, "a/b/c" being the file a/b/c.
//
// Every file is opened below the root with openat2(2) and RESOLVE_BENEATH
// (where the kernel lacks it, through an os.Root, which decides the same),
// so no key and no symbolic link can reach outside the root. What both
// decide, and so this store:
//
//   - A relative symbolic link whose target stays inside the root is
//     followed (a linked file is a value, a linked folder a folder).
//   - A symbolic link that leads outside the root, and every absolute
//     symbolic link (even one naming a place inside the root), is refused:
//     reading through it fails with an error that is not ErrNotExist, and
//     listings leave it out. Set on such a key replaces the link itself
//     with a file (rename does not follow links); Set below a refused
//     folder link fails. Nothing outside the root is ever written.
//
// Only regular files are values: folders, named pipes, sockets and devices
// read as ErrNotExist and are not listed as keys. Listings show every folder
// as a prefix, including an empty one (a folder emptied by Delete stays).
//
// Set writes a temporary file beside the target and renames it into place,
// so readers see the old or the new value, never a mixture; it creates the
// parent folders. It does not fsync: a crash can lose recent writes.
package dir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/zarrfs/zarrfs/store"
)

// Options configures Open.
type Options struct {
	// ReadOnly makes Set and Delete fail with store.ErrReadOnly.
	ReadOnly bool
}

// Store is a directory store. It implements store.Store, store.Lister,
// store.Writer, store.Stater and io.Closer, and is safe for concurrent use.
type Store struct {
	root     *os.Root
	bn       *beneath // openat2 below the root, where the kernel has it
	path     string
	readOnly bool
}

var (
	_ store.Store  = (*Store)(nil)
	_ store.Lister = (*Store)(nil)
	_ store.Writer = (*Store)(nil)
	_ store.Stater = (*Store)(nil)
	_ io.Closer    = (*Store)(nil)
)

// tmpPrefix starts the names of the temporary files Set writes; listings
// leave such files out.
const tmpPrefix = ".zarrfs-tmp-"

// readChunk bounds how much one read call asks for, so a long read notices
// a cancelled context.
const readChunk = 8 << 20

// Open opens the existing directory path as a store.
func Open(path string, opts Options) (*Store, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("dir store %s: %w", path, err)
	}
	root, err := os.OpenRoot(abs)
	if err != nil {
		return nil, fmt.Errorf("dir store: %w", err)
	}
	bn, err := openBeneath(abs)
	if err != nil {
		root.Close()
		return nil, fmt.Errorf("dir store: %w", err)
	}
	return &Store{root: root, bn: bn, path: abs, readOnly: opts.ReadOnly}, nil
}

// String names the store: "dir /abs/path".
func (s *Store) String() string { return "dir " + s.path }

// Path returns the absolute path of the store's directory.
func (s *Store) Path() string { return s.path }

// Close releases the directory handle. Calls after Close fail.
func (s *Store) Close() error { return errors.Join(s.bn.close(), s.root.Close()) }

// openFile opens name below the root for reading: with openat2 where it
// works, else through os.Root (the same containment either way).
func (s *Store) openFile(name string, flags int) (*os.File, error) {
	if f, ok, err := s.bn.open(name, flags); ok {
		return f, err
	}
	return s.root.OpenFile(name, flags, 0)
}

// rootOpenRead is openRead through os.Root.
func (s *Store) rootOpenRead(name string, flags int) (readFile, fs.FileInfo, error) {
	f, err := s.root.OpenFile(name, flags, 0)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, fi, nil
}

// stat returns the file information of name below the root, following
// links that stay below it.
func (s *Store) stat(name string) (fs.FileInfo, error) {
	if fi, ok, err := s.bn.stat(name); ok {
		return fi, err
	}
	return s.root.Stat(name)
}

// errorf wraps err with the store and key, turning "a path component is not
// a directory" into ErrNotExist.
func (s *Store) errorf(key string, err error) error {
	if errors.Is(err, syscall.ENOTDIR) && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %q: %w (%w)", s, key, store.ErrNotExist, err)
	}
	return &keyError{s: s, key: key, err: err}
}

// keyError is errorf's error, "dir /path: "key": err", written when it is
// read: a hierarchy asks for documents that are often missing (.zattrs)
// and only looks at the error's kind.
type keyError struct {
	s   *Store
	key string
	err error
}

func (e *keyError) Error() string { return fmt.Sprintf("%s: %q: %v", e.s, e.key, e.err) }
func (e *keyError) Unwrap() error { return e.err }

func (s *Store) notRegular(key string) error {
	return fmt.Errorf("%s: %q is not a regular file: %w", s, key, store.ErrNotExist)
}

// readFile is a store file open for reading.
type readFile interface {
	io.ReaderAt
	io.Closer
}

// open opens key for reading and returns it with its file information.
func (s *Store) open(ctx context.Context, key string) (readFile, fs.FileInfo, error) {
	if err := store.CheckKey(ctx, key); err != nil {
		return nil, nil, err
	}
	// O_NONBLOCK: opening a named pipe must not wait for a writer.
	const flags = os.O_RDONLY | syscall.O_NONBLOCK
	f, fi, ok, err := s.bn.openRead(key, flags)
	if !ok {
		f, fi, err = s.rootOpenRead(key, flags)
	}
	if err != nil {
		return nil, nil, s.errorf(key, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, s.notRegular(key)
	}
	return f, fi, nil
}

// Get returns the contents of the file key.
func (s *Store) Get(ctx context.Context, key string) ([]byte, error) {
	return s.GetRange(ctx, key, store.All)
}

// GetRange reads the part of the file key that r selects, without reading
// the rest of it.
func (s *Store) GetRange(ctx context.Context, key string, r store.ByteRange) ([]byte, error) {
	b, _, err := s.getRange(ctx, key, r, nil)
	return b, err
}

var _ store.InfoGetter = (*Store)(nil)

// GetRangeInfo is GetRange that also returns the file's size and
// modification time, from the one open.
func (s *Store) GetRangeInfo(ctx context.Context, key string, r store.ByteRange) ([]byte, store.Info, error) {
	b, fi, err := s.getRange(ctx, key, r, nil)
	if err != nil {
		return nil, store.Info{}, err
	}
	return b, store.Info{Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// GetAlloc returns the contents of the file key, read into the buffer
// alloc returns for the file's size. alloc must return a slice of exactly
// the length asked for (its contents are overwritten); the caller owns it
// afterwards, as with Get. The result may be shorter than the buffer when
// the file shrank while it was read.
func (s *Store) GetAlloc(ctx context.Context, key string, alloc func(n int) []byte) ([]byte, error) {
	b, _, err := s.getRange(ctx, key, store.All, alloc)
	return b, err
}

// getRange reads the part of the file key that r selects into a buffer
// from alloc (make when nil), and returns it with the file's information.
func (s *Store) getRange(ctx context.Context, key string, r store.ByteRange, alloc func(int) []byte) ([]byte, fs.FileInfo, error) {
	f, fi, err := s.open(ctx, key)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	return s.readOpen(ctx, key, f, fi, r, alloc)
}

// GetIfChanged reads the file key unless its size and modification time
// are old's (see store.InfoGetter).
func (s *Store) GetIfChanged(ctx context.Context, key string, old store.Info) ([]byte, store.Info, error) {
	f, fi, err := s.open(ctx, key)
	if err != nil {
		return nil, store.Info{}, err
	}
	defer f.Close()
	info := store.Info{Size: fi.Size(), ModTime: fi.ModTime()}
	if old.Validates() && info.Size == old.Size && info.ModTime.Equal(old.ModTime) {
		return nil, info, store.ErrNotModified
	}
	b, fi, err := s.readOpen(ctx, key, f, fi, store.All, nil)
	if err != nil {
		return nil, store.Info{}, err
	}
	return b, store.Info{Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// readOpen reads the part r selects of the file key, open as f with
// information fi, into a buffer from alloc (make when nil).
func (s *Store) readOpen(ctx context.Context, key string, f readFile, fi fs.FileInfo, r store.ByteRange, alloc func(int) []byte) ([]byte, fs.FileInfo, error) {
	start, end, err := r.Resolve(fi.Size())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %q: %w", s, key, err)
	}
	var buf []byte
	if alloc != nil {
		buf = alloc(int(end - start))
	} else {
		buf = make([]byte, end-start)
	}
	n, err := s.readFull(ctx, f, key, buf, start)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, nil, err
	}
	// On io.EOF the file shrank since Stat: return what is there.
	return buf[:n], fi, nil
}

// ReadInto reads len(p) bytes of the file key from offset off straight
// into p and returns the file's size, so that the caller can check it.
// When the file holds fewer than off+len(p) bytes it fails with an error
// matching io.ErrUnexpectedEOF (p's contents are then undefined).
func (s *Store) ReadInto(ctx context.Context, key string, p []byte, off int64) (int64, error) {
	if off < 0 {
		return 0, fmt.Errorf("%s: %q: negative offset %d", s, key, off)
	}
	f, fi, err := s.open(ctx, key)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	size := fi.Size()
	if off > size || int64(len(p)) > size-off {
		return size, fmt.Errorf("%s: %q: %d bytes from %d of a file of %d: %w", s, key, len(p), off, size, io.ErrUnexpectedEOF)
	}
	n, err := s.readFull(ctx, f, key, p, off)
	if errors.Is(err, io.EOF) {
		return size, fmt.Errorf("%s: %q: file shrank to %d bytes while read: %w", s, key, off+int64(n), io.ErrUnexpectedEOF)
	}
	return size, err
}

// readFull reads buf from f at off, in pieces of readChunk so that a
// cancelled context is noticed; io.EOF (unwrapped) means the file ended
// after n bytes.
func (s *Store) readFull(ctx context.Context, f io.ReaderAt, key string, buf []byte, off int64) (int, error) {
	n := 0
	for n < len(buf) {
		if err := ctx.Err(); err != nil {
			return n, err
		}
		m, err := f.ReadAt(buf[n:min(len(buf), n+readChunk)], off+int64(n))
		n += m
		if errors.Is(err, io.EOF) {
			if n == len(buf) {
				return n, nil
			}
			return n, io.EOF
		}
		if err != nil {
			return n, s.errorf(key, err)
		}
	}
	return n, nil
}

// Stat returns the size and modification time of the file key.
func (s *Store) Stat(ctx context.Context, key string) (store.Info, error) {
	if err := store.CheckKey(ctx, key); err != nil {
		return store.Info{}, err
	}
	fi, err := s.stat(key)
	if err != nil {
		return store.Info{}, s.errorf(key, err)
	}
	if !fi.Mode().IsRegular() {
		return store.Info{}, s.notRegular(key)
	}
	return store.Info{Size: fi.Size(), ModTime: fi.ModTime()}, nil
}

// Set writes value to the file key through a temporary file and a rename,
// creating parent folders as needed.
func (s *Store) Set(ctx context.Context, key string, value []byte) error {
	if err := store.CheckWrite(ctx, s, "set", key, s.readOnly); err != nil {
		return err
	}
	parent := ""
	if i := strings.LastIndexByte(key, '/'); i >= 0 {
		parent = key[:i]
		if err := s.root.MkdirAll(parent, 0o777); err != nil {
			return s.errorf(key, err)
		}
	}
	tmp, f, err := s.createTemp(parent)
	if err != nil {
		return s.errorf(key, err)
	}
	_, werr := f.Write(value)
	cerr := f.Close()
	if err := errors.Join(werr, cerr); err != nil {
		_ = s.root.Remove(tmp)
		return s.errorf(key, err)
	}
	if err := s.root.Rename(tmp, key); err != nil {
		_ = s.root.Remove(tmp)
		return s.errorf(key, err)
	}
	return nil
}

// createTemp creates a new file in the folder parent ("" is the root) for
// Set to rename.
func (s *Store) createTemp(parent string) (string, *os.File, error) {
	for range 100 {
		name := store.Join(parent, tmpPrefix+strconv.FormatUint(rand.Uint64(), 36))
		f, err := s.root.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return name, f, err
	}
	return "", nil, errors.New("cannot create a temporary file")
}

// Delete removes the file key. A missing key, or a key that names a folder,
// is not an error and changes nothing.
func (s *Store) Delete(ctx context.Context, key string) error {
	if err := store.CheckWrite(ctx, s, "delete", key, s.readOnly); err != nil {
		return err
	}
	fi, err := s.root.Lstat(key)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	if err != nil {
		return s.errorf(key, err)
	}
	if fi.IsDir() {
		return nil
	}
	if err := s.root.Remove(key); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return s.errorf(key, err)
	}
	return nil
}

// entry is one listed name: a file (key) or a folder (prefix).
type entry struct {
	name  string
	isDir bool
	info  fs.FileInfo // set for folders when asked for, for loop detection
}

// readDir lists the folder dir ("" is the root). A missing folder, or a
// dir that is a file, lists as empty. Names that are not valid keys,
// temporary files, symbolic links that os.Root refuses and special files
// are left out. withInfo asks for the file information of every folder;
// without it only symbolic links are looked up (the folders a directory
// lists as such are below the root), which spares listing a group of
// arrays three system calls per array.
func (s *Store) readDir(ctx context.Context, dir string, withInfo bool) ([]entry, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	name := dir
	if name == "" {
		name = "."
	}
	f, err := s.openFile(name, os.O_RDONLY)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, s.errorf(dir, err)
	}
	defer f.Close()
	des, err := f.ReadDir(-1)
	if errors.Is(err, syscall.ENOTDIR) {
		return nil, nil
	}
	if err != nil {
		return nil, s.errorf(dir, err)
	}
	out := make([]entry, 0, len(des))
	for _, de := range des {
		n := de.Name()
		if strings.HasPrefix(n, tmpPrefix) || store.ValidateKey(n) != nil {
			continue
		}
		typ := de.Type()
		if typ.IsRegular() {
			out = append(out, entry{name: n})
			continue
		}
		if typ&(fs.ModeDir|fs.ModeSymlink) == 0 {
			continue
		}
		if typ.IsDir() && !withInfo {
			out = append(out, entry{name: n, isDir: true})
			continue
		}
		// Folders and symbolic links: ask os.Root, which follows links
		// that stay inside the root and refuses the others.
		fi, err := s.stat(store.Join(dir, n))
		if err != nil {
			continue
		}
		switch {
		case fi.IsDir():
			out = append(out, entry{name: n, isDir: true, info: fi})
		case fi.Mode().IsRegular():
			out = append(out, entry{name: n})
		}
	}
	return out, nil
}

// ListDir returns the files and the folders directly in the folder dir.
func (s *Store) ListDir(ctx context.Context, dir string) (keys, prefixes []string, err error) {
	if err := store.ValidateDir(dir); err != nil {
		return nil, nil, err
	}
	entries, err := s.readDir(ctx, dir, false)
	if err != nil {
		return nil, nil, err
	}
	keys, prefixes = []string{}, []string{}
	for _, e := range entries {
		if e.isDir {
			prefixes = append(prefixes, e.name)
		} else {
			keys = append(keys, e.name)
		}
	}
	slices.Sort(keys)
	slices.Sort(prefixes)
	return keys, prefixes, nil
}

// ListPrefix returns every key that starts with prefix (as a string:
// "a/c/0" matches "a/c/0/1" and "a/c/01"), sorted. It walks the folders
// below, following symbolic links inside the root but never around a loop.
func (s *Store) ListPrefix(ctx context.Context, prefix string) ([]string, error) {
	if err := store.CheckListPrefix(ctx, prefix); err != nil {
		return nil, err
	}
	dir, namePrefix := "", prefix
	if i := strings.LastIndexByte(prefix, '/'); i >= 0 {
		dir, namePrefix = prefix[:i], prefix[i+1:]
	}
	out := []string{}
	start := dir
	if start == "" {
		start = "."
	}
	fi, err := s.stat(start)
	if err != nil || !fi.IsDir() {
		return out, nil // nothing there, or refused by os.Root
	}
	ancestors := []fs.FileInfo{fi}
	var walk func(dir string, filter string) error
	walk = func(dir, filter string) error {
		entries, err := s.readDir(ctx, dir, true)
		if err != nil {
			return err
		}
		for _, e := range entries {
			if !strings.HasPrefix(e.name, filter) {
				continue
			}
			key := store.Join(dir, e.name)
			if !e.isDir {
				out = append(out, key)
				continue
			}
			if slices.ContainsFunc(ancestors, func(a fs.FileInfo) bool { return sameFile(a, e.info) }) {
				continue // a symbolic link back to an enclosing folder
			}
			ancestors = append(ancestors, e.info)
			err := walk(key, "")
			ancestors = ancestors[:len(ancestors)-1]
			if err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(dir, namePrefix); err != nil {
		return nil, err
	}
	slices.Sort(out)
	return out, nil
}
