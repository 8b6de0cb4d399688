package zarr

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store"
)

// storedChunk reads one stored chunk for the codecs' partial decoders
// (codec.RangeReader), and keeps what they read of its structure (a
// shard's index) in the array's chunk cache (codec.Memo).
type storedChunk struct {
	a   *Array
	lin int64 // the chunk's linear index
	key string
}

func (a *Array) storedChunk(lin int64) storedChunk {
	return storedChunk{a: a, lin: lin, key: a.chunkKeyAt(lin)}
}

// Read implements codec.RangeReader.
func (c storedChunk) Read(ctx context.Context) ([]byte, error) {
	return c.a.st.Get(ctx, c.key)
}

// ReadRange implements codec.RangeReader.
func (c storedChunk) ReadRange(ctx context.Context, off, n int64) ([]byte, error) {
	return c.a.st.GetRange(ctx, c.key, store.Range(off, n))
}

// ReadSuffix implements codec.RangeReader.
func (c storedChunk) ReadSuffix(ctx context.Context, n int64) ([]byte, error) {
	return c.a.st.GetRange(ctx, c.key, store.SuffixRange(n))
}

// Remember implements codec.Memo through the cache (one load at a time
// per chunk and part). A chunk that does not exist is remembered too:
// later calls fail at once with an error matching store.ErrNotExist.
func (c storedChunk) Remember(ctx context.Context, part int64, load func(context.Context) (codec.Memoized, error)) (codec.Memoized, error) {
	a := c.a
	if a.cache == nil {
		return load(ctx)
	}
	id := a.cacheID(c.lin)
	id.memo = part + 1
	v, err := a.cache.get(ctx, id, func(ctx context.Context) (*chunkValue, func() bool, error) {
		writes := a.writes.Load()
		valid := func() bool { return a.writes.Load() == writes }
		m, err := load(ctx)
		if errors.Is(err, store.ErrNotExist) {
			return &chunkValue{missing: true}, valid, nil
		}
		if err != nil {
			return nil, nil, err
		}
		return &chunkValue{memo: m}, valid, nil
	})
	if err != nil {
		return nil, err
	}
	if v.missing {
		return nil, fmt.Errorf("chunk %q: %w", c.key, store.ErrNotExist)
	}
	return v.memo, nil
}

// fileChunk is a storedChunk in a store that reads into the caller's
// buffer (codec.ReaderInto): the directory store's files.
type fileChunk struct {
	storedChunk
	rr store.ReaderInto
}

// ReadInto implements codec.ReaderInto.
func (c fileChunk) ReadInto(ctx context.Context, p []byte, off int64) (int64, error) {
	return c.rr.ReadInto(ctx, c.key, p, off)
}

// A chunkLoader gets what a read needs of one chunk, given the runs of
// the read that lie in it (in the read's order) when it uses them.
type chunkLoader interface {
	load(ctx context.Context, lin int64, runs []run) (*chunkValue, error)
	// usesRuns reports whether load looks at the runs (else it is given
	// none: gathering them per chunk costs a read of many short runs).
	usesRuns() bool
}

// wholeChunks loads chunks decoded whole, through the cache.
type wholeChunks struct{ a *Array }

func (l wholeChunks) load(ctx context.Context, lin int64, _ []run) (*chunkValue, error) {
	return l.a.loadChunk(ctx, lin)
}

func (wholeChunks) usesRuns() bool { return false }

// chunkParts decodes, of a chunk a read needs at most a quarter of, only
// the runs it needs, through the codecs' partial decoder (the index and
// inner chunks of a shard, the blocks of a Blosc chunk), straight into
// their place in the read's output (out gives it); the value it returns
// says so and holds nothing (never cached). Other chunks load whole.
type chunkParts struct {
	a   *Array
	out func(run) []byte
}

// partialDecodes counts the chunks read in part (for tests).
var partialDecodes atomic.Int64

func (chunkParts) usesRuns() bool { return true }

func (l chunkParts) load(ctx context.Context, lin int64, runs []run) (*chunkValue, error) {
	a := l.a
	if !a.fewElements(runs) {
		return a.loadChunk(ctx, lin)
	}
	size := int64(a.DataType().Size)
	dsts, offs := make([][]byte, len(runs)), make([]int64, len(runs))
	for i, r := range runs {
		dsts[i], offs[i] = l.out(r), r.inOff*size
	}
	c := a.storedChunk(lin)
	pipe, err := a.PipelineOf(lin) // the array's, but for a rectilinear grid
	if err != nil {
		return nil, a.chunkError(c.key, err)
	}
	err = pipe.DecodeParts(ctx, c, dsts, offs)
	if errors.Is(err, store.ErrNotExist) {
		return &chunkValue{missing: true}, nil
	}
	if err != nil {
		return nil, a.chunkError(c.key, err)
	}
	partialDecodes.Add(1)
	return &chunkValue{placed: true}, nil
}

// loader returns how a read loads its chunks: in part where the array's
// strategy is readPartial and partial is set (a random reader's read,
// which needs little of each chunk), straight into out's place (see
// chunkParts), whole otherwise.
func (a *Array) loader(partial bool, out func(run) []byte) chunkLoader {
	if partial && a.strategy == readPartial {
		return chunkParts{a, out}
	}
	return wholeChunks{a}
}
