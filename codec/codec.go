// Package codec holds the Zarr codecs and the registry that finds them by
// name: the v3 name ("gzip"), the v2 numcodecs id ("gzip") and the URIs of
// the v3 drafts ("https://purl.org/zarr/spec/codec/gzip/1.0").
//
// A chunk moves through a Pipeline of codecs, as the Zarr v3 core spec
// describes: zero or more array→array codecs (transpose), exactly one
// array→bytes codec (bytes, vlen-utf8, sharding_indexed) and zero or more
// bytes→bytes codecs (gzip, zstd, blosc, crc32c). Zarr v2 and v1 chains are
// expressed in the same terms by the caller.
//
// The in-memory form of an "array" between codecs is its elements in C
// order, each element little-endian, ItemSize bytes each. Variable-length
// types (DataType.Size == 0) use the numcodecs vlen layout instead: a
// little-endian uint32 element count, then for each element a uint32 length
// and its bytes.
//
// Every decoder is told the exact size it must produce and fails with an
// error matching ErrCorrupt on any other size; no decoder allocates what a
// header claims before checking that claim against the size it was given.
package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/zarrfs/zarrfs/internal/pyjson"
)

var (
	// ErrCorrupt marks data a codec cannot decode: bad headers, wrong sizes,
	// checksum mismatches, truncated streams.
	ErrCorrupt = errors.New("codec: corrupt data")
	// ErrUnsupported marks a codec, configuration or data type zarrfs does
	// not implement.
	ErrUnsupported = errors.New("codec: unsupported")
)

// CorruptError describes corrupt input to a codec. It matches ErrCorrupt
// and unwraps to its cause, when another error was (a decompressor's, a
// parser's), so that errors.Is and errors.As see through it.
type CorruptError struct {
	Codec  string
	Reason string // what is wrong, the cause's message included
	Err    error  // the cause, or nil
}

func (e *CorruptError) Error() string        { return e.Codec + ": corrupt data: " + e.Reason }
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }
func (e *CorruptError) Unwrap() error        { return e.Err }

// Corruptf returns a *CorruptError for codec with a formatted reason; an
// error formatted with %w is its cause.
func Corruptf(codec, format string, args ...any) error {
	reason, cause := formatCause(format, args)
	return &CorruptError{Codec: codec, Reason: reason, Err: cause}
}

// UnsupportedError names what is not supported. It matches ErrUnsupported
// and unwraps to its cause, if any.
type UnsupportedError struct {
	What string // e.g. `codec "foo"`, `blosc cname "snappy2"`
	Err  error  // the cause, or nil
}

func (e *UnsupportedError) Error() string        { return "unsupported " + e.What }
func (e *UnsupportedError) Is(target error) bool { return target == ErrUnsupported }
func (e *UnsupportedError) Unwrap() error        { return e.Err }

// Unsupportedf returns an *UnsupportedError; an error formatted with %w is
// its cause.
func Unsupportedf(format string, args ...any) error {
	what, cause := formatCause(format, args)
	return &UnsupportedError{What: what, Err: cause}
}

// formatCause formats as fmt.Errorf does and returns the message and the
// errors %w wrapped (joined when more than one).
func formatCause(format string, args []any) (string, error) {
	err := fmt.Errorf(format, args...)
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return err.Error(), u.Unwrap()
	case interface{ Unwrap() []error }:
		return err.Error(), errors.Join(u.Unwrap()...)
	}
	return err.Error(), nil
}

// DataType is what a codec needs to know of the array's element type.
type DataType struct {
	// Name is the Zarr v3 name of the type: "bool", "int8" … "uint64",
	// "float16", "float32", "float64", "complex64", "complex128", "r<bits>"
	// for raw bytes; other fixed-size types use their v3 extension name.
	// Variable-length types are "string" (UTF-8) and "bytes".
	Name string
	// Size is the size of one element in bytes; 0 for variable-length types.
	Size int
}

// Variable reports whether elements have no fixed size.
func (t DataType) Variable() bool { return t.Size == 0 }

// ArraySpec describes the chunk an array→array or array→bytes codec sees.
type ArraySpec struct {
	Shape     []int
	DataType  DataType
	FillValue []byte // one element, little-endian; nil for variable-length types
}

// NumElements returns the product of Shape (1 for rank 0). The caller
// guarantees it does not overflow (the engine checks shapes first).
func (s ArraySpec) NumElements() int {
	n := 1
	for _, d := range s.Shape {
		n *= d
	}
	return n
}

// ByteSize returns the size of the decoded chunk in bytes, or -1 for
// variable-length types.
func (s ArraySpec) ByteSize() int {
	if s.DataType.Variable() {
		return -1
	}
	return s.NumElements() * s.DataType.Size
}

// Codec is implemented by every codec; a codec also implements exactly one
// of ArrayToArray, ArrayToBytes or BytesToBytes. Codecs are immutable after
// construction and safe for concurrent use.
type Codec interface {
	// Name is the codec's canonical (v3) name, for messages and info.
	Name() string
}

// ArrayToArray codecs change the shape or layout of an array (transpose).
type ArrayToArray interface {
	Codec
	// EncodedSpec returns the spec of the array Encode produces from an
	// array described by decoded.
	EncodedSpec(decoded ArraySpec) (ArraySpec, error)
	Encode(chunk []byte, decoded ArraySpec) ([]byte, error)
	// Decode turns an array laid out as EncodedSpec(decoded) back into one
	// described by decoded.
	Decode(chunk []byte, decoded ArraySpec) ([]byte, error)
}

// ArrayToBytes codecs serialise an array (bytes, vlen-utf8, sharding).
type ArrayToBytes interface {
	Codec
	// EncodedSize returns the size Encode produces for decoded, or -1 when
	// it depends on the data.
	EncodedSize(decoded ArraySpec) int
	Encode(chunk []byte, decoded ArraySpec) ([]byte, error)
	// Decode must return exactly decoded.ByteSize() bytes for fixed-size
	// types.
	Decode(data []byte, decoded ArraySpec) ([]byte, error)
}

// BytesToBytes codecs transform a byte string (compressors, checksums).
type BytesToBytes interface {
	Codec
	// EncodedSize returns the size Encode produces from decodedSize bytes,
	// or -1 when it depends on the data.
	EncodedSize(decodedSize int) int
	Encode(data []byte) ([]byte, error)
	// Decode must return exactly decodedSize bytes, or fail with an error
	// matching ErrCorrupt. decodedSize is -1 when the size is not known in
	// advance (after a variable-length array→bytes codec, or after a
	// codec whose EncodedSize is -1); the output is then bounded by
	// UnknownSizeCap.
	Decode(data []byte, decodedSize int) ([]byte, error)
}

// DecoderInto is implemented by BytesToBytes codecs that can decode into a
// buffer the caller provides (a pooled chunk buffer, or the reader's own
// buffer), so that a decode allocates nothing of the chunk's size.
type DecoderInto interface {
	// DecodeInto decodes data into dst, whose length is the exact
	// decoded size, overwriting all of it. It fails with an error matching
	// ErrCorrupt when data does not decode to exactly len(dst) bytes,
	// never writes outside dst[:len(dst)], and keeps neither dst nor data
	// after it returns (on failure dst's contents are undefined).
	DecodeInto(dst, data []byte) error
}

// decodeNew is Decode of a known size for a DecoderInto: data decoded
// into a new buffer of decodedSize bytes.
func decodeNew(c DecoderInto, data []byte, decodedSize int) ([]byte, error) {
	out := make([]byte, decodedSize)
	if err := c.DecodeInto(out, data); err != nil {
		return nil, err
	}
	return out, nil
}

// ArrayDecoderInto is implemented by ArrayToBytes codecs that can decode
// a chunk into a buffer the caller provides (sharding: the inner chunks
// straight into the shard's buffer), with DecoderInto's rules.
type ArrayDecoderInto interface {
	DecodeInto(dst, data []byte, decoded ArraySpec) error
}

// Config is a codec's configuration: the members of a v3 "configuration"
// object, or of a v2 numcodecs object without its "id".
type Config map[string]json.RawMessage

// Decode unmarshals member key of c into v when it is present and not null;
// it reports whether it was. A malformed member is an error naming the codec.
func (c Config) Decode(codec, key string, v any) (bool, error) {
	raw, ok := c[key]
	if !ok || string(raw) == "null" {
		return false, nil
	}
	// The usual members, read as json.Unmarshal reads them, without it.
	switch p := v.(type) {
	case *int:
		if n, ok := plainInt(raw); ok {
			*p = n
			return true, nil
		}
	case *string:
		if chars, ok := pyjson.String(raw); ok {
			*p = string(chars)
			return true, nil
		}
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return false, fmt.Errorf("codec %s: configuration %q: %w", codec, key, err)
	}
	return true, nil
}

// plainInt returns the int the JSON number raw stands for when it is a
// plain integer ("-12", no fraction or exponent) that fits an int.
func plainInt(raw []byte) (int, bool) {
	i := 0
	if len(raw) > 0 && raw[0] == '-' {
		i++
	}
	if i == len(raw) || raw[i] == '0' && len(raw) > i+1 {
		return 0, false
	}
	for _, c := range raw[i:] {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(string(raw))
	return n, err == nil
}

// Factory builds a codec from its configuration.
type Factory func(cfg Config) (Codec, error)

var (
	registryMu sync.RWMutex
	registry   = map[string]Factory{}
)

// Register makes a codec available under each of names (its v3 name, its
// v2 numcodecs id, its draft URIs). Registering a name twice panics, as
// with database/sql drivers.
func Register(f Factory, names ...string) {
	registryMu.Lock()
	defer registryMu.Unlock()
	for _, n := range names {
		if _, dup := registry[n]; dup {
			panic("codec: Register called twice for " + n)
		}
		registry[n] = f
	}
}

// New builds the codec registered under name. An unknown name is an
// *UnsupportedError naming it.
func New(name string, cfg Config) (Codec, error) {
	registryMu.RLock()
	f, ok := registry[name]
	registryMu.RUnlock()
	if !ok {
		return nil, Unsupportedf("codec %q", name)
	}
	c, err := f(cfg)
	if err != nil {
		if errors.Is(err, ErrUnsupported) {
			return nil, err
		}
		return nil, fmt.Errorf("codec %s: %w", name, err)
	}
	return c, nil
}

// Registered reports whether name is registered.
func Registered(name string) bool {
	registryMu.RLock()
	defer registryMu.RUnlock()
	_, ok := registry[strings.TrimSpace(name)]
	return ok
}
