package zarr

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/zarrfs/zarrfs/codec"
	"github.com/zarrfs/zarrfs/store"
)

// arrayIO is an array's binding to its store and cache (bind) and the
// state of its reads and writes.
type arrayIO struct {
	st    store.Store
	path  string
	cache *chunkCache
	id    uint64 // distinguishes arrays in a shared cache
	// live: the store may change (Options.Live); prevIDs are the arrays
	// of the hierarchies this one's replaced whose chunks it takes over
	// where they did not change (Options.Previous), newest first.
	live    bool
	prevIDs []uint64

	writeMu sync.Mutex
	// streams holds where recent reads ended, one slot per sequential
	// reader (several may read one array at once), to recognise them.
	streamMu   sync.Mutex
	streams    [maxStreams]int64
	nextStream int
	// streamFrom and streamAt: where and when each stream started, for
	// its rate (noteRead).
	streamFrom [maxStreams]int64
	streamAt   [maxStreams]time.Time
	// writes counts chunk writes, so that a chunk loaded while one was
	// written is not cached.
	writes atomic.Uint64
	// behind holds the chunks recent sequential reads used, each with
	// its last element, dropped from the cache once the reader is past
	// them (dropBehind).
	behindMu sync.Mutex
	behind   map[int64]int64
	// absent holds listings of the chunk directories, to find chunks
	// the store does not hold without asking for each (absent.go).
	absent absentChunks
}

var arrayIDs atomic.Uint64

// bind attaches the array to the store it lives in.
func (a *Array) bind(st store.Store, path string, cache *chunkCache) {
	if sh := a.DraftShards(); sh != nil {
		st = &draftShards{Store: st, DraftShards: sh}
	}
	a.st, a.path, a.cache = st, path, cache
	a.id = arrayIDs.Add(1)
}

// readable reports why the array's contents cannot be read, if they cannot.
func (a *Array) readable() error {
	if a.Err != nil {
		return a.Err
	}
	if a.Pipeline() == nil || a.st == nil {
		return fmt.Errorf("array %q: %w: no codec pipeline", a.path, ErrUnsupported)
	}
	return nil
}

// chunkKeyAt returns the store key of the chunk with C-order index lin
// in the chunk grid.
func (a *Array) chunkKeyAt(lin int64) string {
	return a.chunkKey(a.Layout().ChunkIndex(lin))
}

// chunkKey returns the store key of the chunk at idx.
func (a *Array) chunkKey(idx []int64) string {
	return a.ChunkKey(a.path, idx)
}

// chunkError wraps err with the store, the array and the chunk key.
func (a *Array) chunkError(key string, err error) error {
	return store.Errorf(a.st, a.ExplainChunkError(err), "array %q: chunk %q", "/"+a.path, key)
}

// getStored returns the stored bytes of the chunk at key. When the store
// reads into a buffer of the caller's (store.AllocGetter), and the elements have a fixed size
// (so that nothing decoded from it points into it), they lie in buf, a
// buffer from the array's pool; buf is nil otherwise.
func (a *Array) getStored(ctx context.Context, key string) (data, buf []byte, err error) {
	g, ok := a.st.(store.AllocGetter)
	if !ok || a.Variable() {
		data, err = a.st.Get(ctx, key)
		return data, nil, err
	}
	pool := a.cache.buffers()
	data, err = g.GetAlloc(ctx, key, func(n int) []byte {
		buf = pool.get(n)
		return buf
	})
	if err != nil {
		pool.put(buf)
		return nil, nil, err
	}
	return data, buf, nil
}

// getLive reads the chunk key (linear index lin) of a live hierarchy's
// array with what the store says of it (ig). When the array took over the
// chunks of earlier ones (prevIDs) and one of those has chunk lin cached
// with what the store said of it then, the chunk is read only if it
// changed: otherwise getLive returns the cached value as old (with a
// reference, which passes to the caller), moved to this array. A cached
// value is returned so too when the store cannot answer (staleIfError).
func (a *Array) getLive(ctx context.Context, ig store.InfoGetter, lin int64, key string) (data []byte, info store.Info, old *chunkValue, err error) {
	// stale, from prevKey, is a cached value without validators (a chunk
	// found missing): served as it was if the store cannot answer.
	var stale *chunkValue
	var staleKey chunkID
	for _, id := range a.prevIDs {
		prevKey := chunkID{array: id, chunk: lin}
		v := a.cache.cached(prevKey)
		if v == nil {
			continue
		}
		if !v.stored.Validates() {
			stale, staleKey = v, prevKey
			break
		}
		if a.cache.servingStale() {
			a.cache.drop(prevKey)
			return nil, v.stored, v, nil
		}
		data, info, err = ig.GetIfChanged(ctx, key, v.stored)
		if errors.Is(err, store.ErrNotModified) {
			a.cache.revalidated()
			a.cache.drop(prevKey)
			return nil, v.stored, v, nil
		}
		if a.staleIfError(ctx, key, err) {
			a.cache.drop(prevKey)
			return nil, v.stored, v, nil
		}
		v.release()
		return data, info, nil, err
	}
	data, info, err = ig.GetRangeInfo(ctx, key, store.All)
	if stale != nil {
		if a.staleIfError(ctx, key, err) {
			a.cache.drop(staleKey)
			return nil, stale.stored, stale, nil
		}
		stale.release()
	}
	return data, info, nil, err
}

// decodeFixed decodes the stored chunk data of fixed-size elements, which
// lies in in when in is not nil (a buffer from the array's pool, which
// decodeFixed takes over). Where the codecs allow it the chunk is decoded
// into a pooled buffer, and an input the decoded chunk is part of becomes
// the chunk's buffer: the value returned then holds a pooled buffer, with
// one reference (the caller's).
func (a *Array) decodeFixed(lin int64, key string, data, in []byte) (*chunkValue, error) {
	want := a.Layout().ChunkElemsOf(lin) * int64(a.DataType().Size)
	pool := a.cache.buffers()
	pipe, err := a.PipelineOf(lin) // the array's, but for a rectilinear grid
	if err != nil {
		pool.put(in)
		return nil, a.chunkError(key, err)
	}
	if pipe.CanDecodeInto() {
		dst := pool.get(int(want))
		err := pipe.DecodeInto(dst, data)
		pool.put(in)
		if err != nil {
			pool.put(dst)
			return nil, a.chunkError(key, err)
		}
		return pooledValue(dst, dst, pool), nil
	}
	dec, err := pipe.Decode(data)
	if err == nil && int64(len(dec)) != want {
		err = codec.Corruptf("pipeline", "decoded %d bytes, want %d", len(dec), want)
	}
	if err != nil {
		pool.put(in)
		return nil, a.chunkError(key, err)
	}
	if in != nil {
		if overlaps(dec, in) {
			return pooledValue(dec, in, pool), nil
		}
		pool.put(in)
	}
	return &chunkValue{fixed: dec}, nil
}

// loadChunk returns the decoded chunk with linear index lin, from the
// cache or the store. The caller holds a reference to it: release it when
// done.
func (a *Array) loadChunk(ctx context.Context, lin int64) (*chunkValue, error) {
	return a.loadChunkAs(ctx, lin, false)
}

// loadChunkAs is loadChunk; a read-ahead load (ahead) of a cache that
// orders their decoding waits for a slot between reading the chunk and
// decoding it (decodeSlots).
func (a *Array) loadChunkAs(ctx context.Context, lin int64, ahead bool) (*chunkValue, error) {
	if a.knownAbsent(lin) {
		return absentValue, nil
	}
	load := func(ctx context.Context) (*chunkValue, func() bool, error) {
		key := a.chunkKeyAt(lin)
		writes := a.writes.Load()
		valid := func() bool { return a.writes.Load() == writes }
		var data, in []byte
		var stored store.Info
		var err error
		if ig, ok := a.st.(store.InfoGetter); ok && a.live {
			var old *chunkValue
			data, stored, old, err = a.getLive(ctx, ig, lin, key)
			if old != nil {
				return old, valid, nil
			}
		} else {
			data, in, err = a.getStored(ctx, key)
		}
		if errors.Is(err, store.ErrNotExist) {
			return &chunkValue{missing: true}, valid, nil
		}
		if err != nil {
			return nil, nil, a.chunkError(key, err)
		}
		if ahead && a.cache != nil && a.cache.decoding != nil {
			slots := a.cache.decoding
			if err := slots.acquire(ctx, lin); err != nil {
				a.cache.buffers().put(in)
				return nil, nil, err
			}
			defer slots.release()
		}
		var v *chunkValue
		if !a.Variable() {
			if v, err = a.decodeFixed(lin, key, data, in); err != nil {
				return nil, nil, err
			}
		} else {
			pipe, err := a.PipelineOf(lin)
			if err != nil {
				return nil, nil, a.chunkError(key, err)
			}
			dec, err := pipe.Decode(data)
			if err != nil {
				return nil, nil, a.chunkError(key, err)
			}
			elems, err := splitVlen(dec, a.Layout().ChunkElemsOf(lin))
			if err != nil {
				return nil, nil, a.chunkError(key, err)
			}
			v = &chunkValue{vlen: elems}
		}
		v.stored = stored
		return v, valid, nil
	}
	if a.cache == nil {
		v, _, err := load(ctx)
		return v, err
	}
	return a.cache.get(ctx, a.cacheID(lin), load)
}

// cacheID names the decoded chunk with linear index lin in the cache.
func (a *Array) cacheID(lin int64) chunkID {
	return chunkID{array: a.id, chunk: lin}
}

// splitVlen splits the numcodecs variable-length layout (uint32 count, then
// uint32 length and bytes per element) into n elements.
func splitVlen(b []byte, n int64) ([][]byte, error) {
	if len(b) < 4 {
		return nil, codec.Corruptf("vlen", "%d bytes, no element count", len(b))
	}
	if got := int64(binary.LittleEndian.Uint32(b)); got != n {
		return nil, codec.Corruptf("vlen", "%d elements, want %d", got, n)
	}
	b = b[4:]
	out := make([][]byte, n)
	for i := range out {
		if len(b) < 4 {
			return nil, codec.Corruptf("vlen", "truncated at element %d", i)
		}
		l := binary.LittleEndian.Uint32(b)
		b = b[4:]
		if uint64(l) > uint64(len(b)) {
			return nil, codec.Corruptf("vlen", "element %d of %d bytes overruns the chunk", i, l)
		}
		out[i] = b[:l:l]
		b = b[l:]
	}
	return out, nil
}

// run is a stretch of elements contiguous both in a chunk and in the
// array's C-order content.
type run struct {
	chunk  int64 // the chunk's index in the chunk grid, in C order
	inOff  int64 // first element in the chunk
	outOff int64 // first element in the array
	n      int64 // elements
	valid  int64 // elements of the chunk inside the array (not overhanging)
}

// runs calls fn for the runs covering the elements [e0, e1) in order.
func (a *Array) runs(e0, e1 int64, fn func(run) error) error {
	if a.Layout().Rectilinear() {
		return a.rectRuns(e0, e1, fn)
	}
	shape, chunks := a.Shape(), a.ChunkShape()
	r := len(shape)
	if r == 0 {
		if e0 < e1 {
			return fn(run{n: 1, valid: 1})
		}
		return nil
	}
	// Trailing dimensions whose chunk size equals the array size are
	// contiguous in both: runs go along dimension d over blocks of inner.
	k := r
	for k > 0 && chunks[k-1] == shape[k-1] {
		k--
	}
	d := max(k-1, 0)
	inner := int64(1)
	for i := d + 1; i < r; i++ {
		inner *= shape[i]
	}
	// cstride[i] is the element stride of dimension i inside a chunk.
	cstride := make([]int64, r)
	s := int64(1)
	for i := r - 1; i >= 0; i-- {
		cstride[i] = s
		s *= chunks[i]
	}
	idx := make([]int64, d+1)
	cidx := make([]int64, r)
	for e := e0; e < e1; {
		// Split e into idx[0..d] and t, the offset inside a block of inner.
		t := e % inner
		q := e / inner
		for i := d; i >= 0; i-- {
			idx[i] = q % shape[i]
			q /= shape[i]
		}
		in := t
		for i := 0; i <= d; i++ {
			cidx[i] = idx[i] / chunks[i]
			in += (idx[i] % chunks[i]) * cstride[i]
		}
		var n int64
		if k == 0 {
			n = e1 - e
		} else {
			n = (min((cidx[d]+1)*chunks[d], shape[d])-idx[d])*inner - t
			n = min(n, e1-e)
		}
		valid := int64(1)
		for i := range r {
			valid *= min(chunks[i], shape[i]-cidx[i]*chunks[i])
		}
		if err := fn(run{chunk: a.Layout().Linear(cidx), inOff: in, outOff: e, n: n, valid: valid}); err != nil {
			return err
		}
		e += n
	}
	return nil
}

// fetchWorkers returns how many chunks a read of a fetches at once.
func (a *Array) fetchWorkers() int {
	if a.cache != nil && cap(a.cache.prefetch) > 0 {
		return cap(a.cache.prefetch)
	}
	return runtime.GOMAXPROCS(0)
}

// batchBytes bounds the decoded chunks one step of a read holds at once.
const batchBytes = 256 << 20

// batchChunkBytes is what one step of a read of small chunks takes in
// (chunks of 1 MiB or more go 4 per core), and maxBatchChunks the most
// chunks it takes.
const (
	batchChunkBytes = 4 << 20
	maxBatchChunks  = 1 << 16
)

// forRuns calls apply, in order, for every run each produces (all runs
// of a read, whose chunks it gets from ld), with the run's chunk: see batch.
func (a *Array) forRuns(ctx context.Context, each func(func(run) error) error, ld chunkLoader, apply func(run, *chunkValue) error) error {
	b := a.newBatch(ctx, ld, apply)
	if err := each(b.add); err != nil {
		return err
	}
	return b.flush()
}

// batch gathers the runs of a read with the chunks they lie in, as many
// as a step of the read holds (maxChunks), then gets those chunks (from
// the cache, or loaded in parallel) and applies the runs in order.
type batch struct {
	a         *Array
	ctx       context.Context
	ld        chunkLoader
	apply     func(run, *chunkValue) error
	workers   int
	maxChunks int

	runs   []run
	chunks []int64       // the chunks of runs, in the order first used
	at     map[int64]int // chunk → its index in chunks
	last   int64         // the chunk of the last run added
}

func (a *Array) newBatch(ctx context.Context, ld chunkLoader, apply func(run, *chunkValue) error) *batch {
	workers := a.fetchWorkers()
	chunkBytes := max(a.Layout().ChunkElems()*int64(max(a.DataType().Size, 8)), 1)
	// Small chunks come many to a batch, so that a listing can find the
	// absent ones among them (findAbsent).
	return &batch{a: a, ctx: ctx, ld: ld, apply: apply, workers: workers,
		maxChunks: int(max(min(max(int64(4*workers), batchChunkBytes/chunkBytes), batchBytes/chunkBytes, maxBatchChunks), 1)),
		at:        map[int64]int{}, last: -1}
}

// add adds r, flushing the batch first when r needs one chunk too many.
func (b *batch) add(r run) error {
	if r.chunk != b.last {
		if _, ok := b.at[r.chunk]; !ok {
			if len(b.chunks) >= b.maxChunks {
				if err := b.flush(); err != nil {
					return err
				}
			}
			b.at[r.chunk] = len(b.chunks)
			b.chunks = append(b.chunks, r.chunk)
		}
		b.last = r.chunk
	}
	b.runs = append(b.runs, r)
	return nil
}

// flush gets the batch's chunks and applies its runs.
func (b *batch) flush() error {
	a := b.a
	// A read given up (FUSE INTERRUPT) stops between steps.
	if err := b.ctx.Err(); err != nil {
		return err
	}
	vals := make([]*chunkValue, len(b.chunks))
	defer func() {
		for _, v := range vals {
			v.release()
		}
	}()
	perChunk := make([][]run, len(b.chunks))
	if b.ld.usesRuns() {
		for _, r := range b.runs {
			i := b.at[r.chunk]
			perChunk[i] = append(perChunk[i], r)
		}
	}
	// Chunks in the cache are taken here; the others are loaded, in
	// parallel when there are several.
	var todo []int
	for i, lin := range b.chunks {
		if a.cache != nil {
			if vals[i] = a.cache.cached(a.cacheID(lin)); vals[i] != nil {
				continue
			}
		}
		todo = append(todo, i)
	}
	// Of many chunks, those a listing shows absent need no request.
	if len(todo) >= listMinChunks && a.lister() != nil {
		lins := make([]int64, len(todo))
		for k, i := range todo {
			lins[k] = b.chunks[i]
		}
		found := make([]*chunkValue, len(todo))
		a.findAbsent(b.ctx, lins, found)
		left := todo[:0]
		for k, i := range todo {
			if found[k] != nil {
				vals[i] = found[k]
			} else {
				left = append(left, i)
			}
		}
		todo = left
	}
	load := func(ctx context.Context, i int) error {
		v, err := b.ld.load(ctx, b.chunks[i], perChunk[i])
		vals[i] = v
		return err
	}
	switch len(todo) {
	case 0:
	case 1:
		// Most reads need one chunk: load it here, not on a goroutine
		// of its own.
		if err := load(b.ctx, todo[0]); err != nil {
			return err
		}
	default:
		g, gctx := errgroup.WithContext(b.ctx)
		g.SetLimit(b.workers)
		for _, i := range todo {
			if gctx.Err() != nil {
				break // failed or given up: start no more loads
			}
			g.Go(func() error { return load(gctx, i) })
		}
		if err := g.Wait(); err != nil {
			return err
		}
		if err := b.ctx.Err(); err != nil {
			return err // some chunks were not loaded
		}
	}
	for _, r := range b.runs {
		if err := b.apply(r, vals[b.at[r.chunk]]); err != nil {
			return err
		}
	}
	b.runs, b.chunks = b.runs[:0], b.chunks[:0]
	clear(b.at)
	b.last = -1
	return nil
}

// fewElements reports whether runs need at most a quarter of their chunk.
func (a *Array) fewElements(runs []run) bool {
	var n int64
	for _, r := range runs {
		n += r.n
	}
	return n <= a.Layout().ChunkElems()/4
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
	// read's, when the read continues the reader's earlier ones and cannot
	// go straight to the store (rawReader); otherwise once it is done.
	// (The first read of a reader may be its only one: a read held up by
	// the store, then given up, would otherwise leave loads behind it.)
	// On a remote store, where waiting costs a round trip, a first read
	// starts them at once too, and they are cancelled if the read is
	// given up before it is done.
	readAhead := sequential && a.cache != nil && !a.cache.noReadAhead
	aheadStarted := readAhead && (continues || a.cache.aheadTime > 0) && a.rawReader() == nil
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
		if direct, err = a.readDirect(ctx, p[:n], e0, e1); err == nil && !direct {
			err = a.readElements(ctx, p[:n], e0, e1, !sequential, col)
		}
	} else {
		// Whole elements, into a buffer of the pool (they overwrite it).
		pool := a.cache.buffers()
		buf := pool.get(int((e1 - e0) * item))
		if direct, err = a.readDirect(ctx, buf, e0, e1); err == nil && !direct {
			err = a.readElements(ctx, buf, e0, e1, !sequential, nil)
		}
		copy(p[:n], buf[off-e0*item:])
		pool.put(buf)
	}
	if err != nil {
		return 0, err
	}
	// Reads straight from the store need no read-ahead: the kernel reads
	// ahead in the store's files.
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

// maxStreams is how many sequential readers of one array are told apart.
const maxStreams = 8

// noteRead records a read of n bytes at off and reports whether it is a
// sequential reader's, and whether it continues one: it starts where a
// recent read ended or, being large, near there (the kernel sends the
// read-ahead requests of one reader concurrently, so they arrive a little
// out of order). A large read at offset 0 starts a sequential reader.
// rate is the reader's bytes per second since its stream started (0 for
// a new stream, or one younger than minRateAge): a reader that seeks
// starts a new stream, so its read-ahead starts small again.
func (a *Array) noteRead(off, n int64) (sequential, continues bool, rate float64) {
	a.streamMu.Lock()
	defer a.streamMu.Unlock()
	for i, end := range a.streams {
		if end > 0 && off > 0 && (off == end || n >= seqMinRead && off >= end-8*n && off <= end+8*n) {
			a.streams[i] = max(end, off+n)
			if age := time.Since(a.streamAt[i]); age >= minRateAge {
				rate = float64(a.streams[i]-a.streamFrom[i]) / age.Seconds()
			}
			return true, true, rate
		}
	}
	i := a.nextStream
	a.streams[i], a.streamFrom[i], a.streamAt[i] = off+n, off, time.Now()
	a.nextStream = (a.nextStream + 1) % maxStreams
	return off == 0 && n >= seqMinRead, false, 0
}

// minRateAge is the youngest stream whose rate noteRead reports.
const minRateAge = 50 * time.Millisecond

// seqMinRead is the smallest read that counts as sequential when it starts
// near, not at, the end of the last read: the kernel's page-cache reads
// are 128 KiB or more.
const seqMinRead = 64 << 10

// dropBehind remembers the chunks a sequential reader's read of the
// elements [e0, e1) used (those from the chunk of e0 to the chunk of
// e1-1 in linear order: all a read of whole rows uses) and drops from the
// cache those it remembered that end between slack and 5 × slack elements
// before e0 (those further behind belong to another, slower reader): the
// reader is past them and the kernel keeps what it read in its page cache.
// Memory then goes round between the chunks being decoded instead of
// filling the cache with chunks nobody will ask for (fresh memory is slow
// to fault in).
func (a *Array) dropBehind(e0, e1, slack int64) {
	first := a.Layout().ChunkOf(e0)
	last := a.Layout().ChunkOf(e1 - 1)
	var drop []int64
	a.behindMu.Lock()
	for c, end := range a.behind {
		switch {
		case end >= e0-slack:
			continue
		case end >= e0-5*slack:
			drop = append(drop, c)
		}
		// Chunks further behind are forgotten but left in the cache:
		// they are another reader's, which this one overtook.
		delete(a.behind, c)
	}
	if a.behind == nil {
		a.behind = map[int64]int64{}
	}
	for c := first; c <= last && len(a.behind) < maxBehind; c++ {
		if _, ok := a.behind[c]; !ok {
			a.behind[c] = a.Layout().ChunkLastElem(c)
		}
	}
	a.behindMu.Unlock()
	for _, c := range drop {
		a.cache.drop(a.cacheID(c))
	}
}

// maxBehind bounds the chunks dropBehind remembers.
const maxBehind = 4096

// readAheadTimeout bounds one read-ahead load.
const readAheadTimeout = time.Minute

// maxAheadChunks bounds the chunks a read-ahead window spans, whatever
// their size: the window is walked at every read, and each chunk costs a
// cache entry (entryOverhead) however small it is.
const maxAheadChunks = 1024

// readAhead keeps the chunks after those of a read of the elements
// [e0, e1) loading in the background, into the cache: one per core but
// the read's own (at least one). A C-order reader meets chunks in the
// order of their linear index (chunk (i, j) before (i, j+1) and (i+1, 0)),
// so the chunks ahead are those after the chunk of the read's last
// element, as far as the largest of one per core, a read's worth and a
// slab of chunks along the first dimension (so the next row of chunks,
// when the array's rows cross many, loads while the reader is still in
// the current one), and at most a quarter of the cache (counting what an
// entry costs besides its bytes) and maxAheadChunks. On a remote store
// (Options.Remote) the window is also at least what the reader, at its
// rate (bytes per second, from noteRead), reads in aheadTime, within the
// same bound. Chunks cached, loading or known absent (a listing, absent.go)
// are passed over; loads that cannot
// start at once are skipped. The loads end with ctx, or after
// readAheadTimeout.
func (a *Array) readAhead(ctx context.Context, e0, e1 int64, rate float64) {
	c := a.cache
	if c == nil || c.limit <= 0 || e1 >= a.Layout().Elems() || ctx.Err() != nil {
		return
	}
	// The read decodes its own chunks on one core; the read-ahead keeps
	// the others busy.
	workers := max(int64(cap(c.prefetch))-1, 1)
	chunkBytes := max(a.Layout().ChunkElems()*int64(max(a.DataType().Size, 8)), 1)
	ahead := max(workers, a.Layout().SlabChunks(), (e1-e0)/a.Layout().ChunkElems())
	if c.aheadTime > 0 {
		ahead = max(ahead, int64(rate*c.aheadTime.Seconds())/chunkBytes)
	}
	ahead = min(ahead, c.limit/4/(chunkBytes+entryOverhead), maxAheadChunks)
	last := a.Layout().ChunkOf(e1 - 1)
	end := min(last+1+ahead, a.Layout().Chunks())
	for lin, started := last+1, int64(0); lin < end && started < workers; lin++ {
		if c.present(a.cacheID(lin)) || a.knownAbsent(lin) {
			continue
		}
		select {
		case c.prefetch <- struct{}{}:
		default:
			return
		}
		started++
		go func() {
			defer func() { <-c.prefetch }()
			ctx, cancel := context.WithTimeout(ctx, readAheadTimeout)
			defer cancel()
			v, _ := a.loadChunkAs(ctx, lin, true) // errors show again when the chunk is read
			v.release()
		}()
	}
}

// elementsBlock is how many bytes of fixed-size elements Elements reads at
// once (one element at least).
const elementsBlock = 1 << 20

// Elements calls fn with every element in C order: the bytes of a
// variable-length element, or the little-endian bytes of a fixed-size one.
// fn must not keep or modify elem after it returns.
func (a *Array) Elements(ctx context.Context, fn func(elem []byte) error) error {
	if err := a.readable(); err != nil {
		return err
	}
	if a.Variable() {
		each := func(fn func(run) error) error { return a.runs(0, a.Layout().Elems(), fn) }
		fill := a.FillElement()
		return a.forRuns(ctx, each, wholeChunks{a}, func(r run, v *chunkValue) error {
			for i := range r.n {
				e := fill
				if !v.missing {
					e = v.vlen[r.inOff+i]
				}
				if err := fn(e); err != nil {
					return err
				}
			}
			return nil
		})
	}
	item := int64(a.DataType().Size)
	block := max(elementsBlock/item, 1)
	buf := make([]byte, min(block, a.Layout().Elems())*item)
	for e := int64(0); e < a.Layout().Elems(); e += block {
		end := min(e+block, a.Layout().Elems())
		b := buf[:(end-e)*item]
		if err := a.readElements(ctx, b, e, end, false, nil); err != nil {
			return err
		}
		for i := int64(0); i < int64(len(b)); i += item {
			if err := fn(b[i : i+item]); err != nil {
				return err
			}
		}
	}
	return nil
}

// rectRuns is runs for a rectilinear chunk grid, whose chunks have
// several shapes: a run is at most one stretch of the last dimension
// inside one chunk (the regular grid's runs, which join dimensions, are
// left as they are).
func (a *Array) rectRuns(e0, e1 int64, fn func(run) error) error {
	l := a.Layout()
	shape := a.Shape()
	r := len(shape)
	if r == 0 {
		if e0 < e1 {
			return fn(run{n: 1, valid: 1})
		}
		return nil
	}
	idx, cidx := make([]int64, r), make([]int64, r)
	start, length := make([]int64, r), make([]int64, r)
	for e := e0; e < e1; {
		q := e
		for i := r - 1; i >= 0; i-- {
			idx[i] = q % shape[i]
			q /= shape[i]
			// Locate (a binary search) only on leaving the chunk (none
			// is located yet while its length is 0).
			if idx[i] < start[i] || idx[i] >= start[i]+length[i] {
				cidx[i], start[i], length[i] = l.Locate(i, idx[i])
			}
		}
		var in int64
		valid, stride := int64(1), int64(1)
		for i := r - 1; i >= 0; i-- {
			in += (idx[i] - start[i]) * stride
			stride *= length[i]
			valid *= min(length[i], shape[i]-start[i])
		}
		n := min(min(start[r-1]+length[r-1], shape[r-1])-idx[r-1], e1-e)
		if err := fn(run{chunk: l.Linear(cidx), inOff: in, outOff: e, n: n, valid: valid}); err != nil {
			return err
		}
		e += n
	}
	return nil
}
