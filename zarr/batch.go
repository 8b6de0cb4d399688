package zarr

// Batches: a read's runs gathered with the chunks they lie in, a step of
// the read at a time, whose chunks load in parallel (forRuns).

import (
	"context"
	"runtime"

	"golang.org/x/sync/errgroup"
)

// fetchWorkers returns how many chunks a read of a fetches at once.
func (a *Array) fetchWorkers() int {
	if a.cache != nil && cap(a.cache.prefetch) > 0 {
		return a.cache.aheadWorkers(a.cache.far())
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
