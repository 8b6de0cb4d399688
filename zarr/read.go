package zarr

import (
	"context"
	"fmt"
	"io"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store"
)

// readStrategy is how reads of an array's bytes (readAt) get their
// elements: chosen once, from the array's codec pipeline and store, when
// the array is bound to them (bind), not tried at each read.
type readStrategy int

const (
	// readWhole decodes the chunks a read needs whole, into the cache.
	readWhole readStrategy = iota
	// readPartial: the codecs decode parts of chunks (codec.PartsDecoded:
	// the inner chunks of a shard, the blocks of a Blosc chunk), so a
	// random reader's read decodes only the parts it needs (chunkParts);
	// a sequential reader's decodes whole chunks, cached and read ahead.
	readPartial
	// readDirect: the chunks are stored as their decoded bytes
	// (codec.PartsStored) in a store that reads into the caller's buffer
	// (store.ReaderInto), so a read copies its runs straight from the
	// store into its output (readDirect), unless it has many short runs:
	// those decode whole chunks.
	readDirect
)

// chooseStrategy returns the array's readStrategy, and the store's
// store.ReaderInto for readDirect. (A rectilinear grid's chunks have
// pipelines of their own, of the same codecs: the array's tells what
// they all can.)
func (a *Array) chooseStrategy() (readStrategy, store.ReaderInto) {
	pipe := a.Pipeline()
	switch {
	case pipe == nil:
		return readWhole, nil
	case pipe.Parts() == codec.PartsStored:
		if rr, ok := a.st.(store.ReaderInto); ok {
			return readDirect, rr
		}
	case pipe.Parts() == codec.PartsDecoded && a.cache != nil:
		return readPartial, nil
	}
	return readWhole, nil
}

// readElements decodes the elements [e0, e1) into dst; partial allows
// decoding parts of chunks. With col, the runs found in decoded chunks
// are not copied into dst but handed to col as slices of the chunks
// (col.add puts the others, read into dst, between them).
func (a *Array) readElements(ctx context.Context, dst []byte, e0, e1 int64, partial bool, col *collector) error {
	size := int64(a.DataType().Size)
	each := func(fn func(run) error) error { return a.runs(e0, e1, fn) }
	out := func(r run) []byte { return dst[(r.outOff-e0)*size : (r.outOff-e0+r.n)*size] }
	return a.forRuns(ctx, each, a.loader(partial, out), func(r run, v *chunkValue) error {
		out := out(r)
		switch {
		case v.placed:
		case v.missing:
			a.FillElements(out)
		case col != nil && col.hold(v.fixed[r.inOff*size:(r.inOff+r.n)*size], v):
			return nil
		default:
			copy(out, v.fixed[r.inOff*size:])
		}
		if col != nil {
			col.add(out)
		}
		return nil
	})
}

// ReadAt reads len(p) bytes of the logical content from off, with
// io.ReaderAt semantics: fewer bytes than len(p) only with an error, io.EOF
// at the end.
func (a *Array) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	return a.readAt(ctx, p, off, nil)
}

// readAt is ReadAt; with col, see readElements.
func (a *Array) readAt(ctx context.Context, p []byte, off int64, col *collector) (int, error) {
	if err := a.readable(); err != nil {
		return 0, err
	}
	if a.Variable() {
		return 0, fmt.Errorf("array %q: %w: variable-length elements have no byte content (use Elements)", "/"+a.path, ErrUnsupported)
	}
	if off < 0 {
		return 0, fmt.Errorf("array %q: negative offset %d", "/"+a.path, off)
	}
	size := a.Size()
	if off >= size {
		return 0, io.EOF
	}
	n := min(int64(len(p)), size-off)
	item := int64(a.DataType().Size)
	e0, e1 := off/item, (off+n-1)/item+1
	// A sequential reader reads whole shards (cached, read ahead); a
	// random one only the parts of shards it needs.
	sequential, continues, rate := a.noteRead(off, n)
	// A sequential reader's next chunks start loading now, beside this
	// read's, when the read continues the reader's earlier ones;
	// otherwise once it is done. (The first read of a reader may be its
	// only one: a read held up by the store, then given up, would
	// otherwise leave loads behind it.) On a remote store, where waiting
	// costs a round trip, a first read starts them at once too, and they
	// are cancelled if the read is given up before it is done. Reads
	// straight from the store (readDirect) need none: the kernel reads
	// ahead in the store's files.
	readAhead := sequential && a.cache != nil && !a.cache.noReadAhead
	aheadStarted := readAhead && (continues || a.cache.aheadTime > 0) && a.strategy != readDirect
	var direct bool
	var err error
	if aheadStarted {
		ahead := sessionOf(ctx)
		if !continues {
			var cancel context.CancelFunc
			ahead, cancel = context.WithCancel(ahead)
			stop := context.AfterFunc(ctx, cancel)
			defer func() {
				if stop() && err != nil {
					cancel()
				}
			}()
		}
		a.readAhead(ahead, e0, e1, rate)
	}
	// A remote store, which queues requests, serves the read's own before
	// those read ahead, which it waits for otherwise.
	if a.cache != nil && a.cache.aheadTime > 0 {
		ctx = store.Urgent(ctx)
	}
	if e1-e0 >= listMinChunks*a.Layout().ChunkElems() && a.noneStored(ctx) {
		// No chunk stored: all fill value, with no chunk looked at.
		a.fillRange(p[:n], off, item)
		if col != nil {
			col.add(p[:n])
		}
	} else if off%item == 0 && n%item == 0 {
		direct, err = a.readStrategically(ctx, p[:n], e0, e1, sequential, col)
	} else {
		// Whole elements, into a buffer of the pool (they overwrite it).
		pool := a.cache.buffers()
		buf := pool.get(int((e1 - e0) * item))
		direct, err = a.readStrategically(ctx, buf, e0, e1, sequential, nil)
		copy(p[:n], buf[off-e0*item:])
		pool.put(buf)
	}
	if err != nil {
		return 0, err
	}
	if readAhead && !direct {
		if !aheadStarted {
			a.readAhead(sessionOf(ctx), e0, e1, rate)
		}
		a.dropBehind(e0, e1, 8*(e1-e0))
	}
	if n < int64(len(p)) {
		return int(n), io.EOF
	}
	return int(n), nil
}

// readStrategically reads the elements [e0, e1) into dst by the array's
// readStrategy and reports whether it read them straight from the store
// (readDirect).
func (a *Array) readStrategically(ctx context.Context, dst []byte, e0, e1 int64, sequential bool, col *collector) (direct bool, err error) {
	if a.strategy == readDirect {
		if direct, err = a.readDirect(ctx, dst, e0, e1); err != nil || direct {
			return direct, err
		}
	}
	return false, a.readElements(ctx, dst, e0, e1, !sequential, col)
}
