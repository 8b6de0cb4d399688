package zarr

import (
	"context"
	"errors"

	"golang.org/x/sync/errgroup"

	"github.com/zarrfs/zarrfs/store"
)

// directMin is the average run length from which a read copies its runs
// straight from uncompressed chunks in the store.
const directMin = 32 << 10

// readDirect reads the elements [e0, e1) into dst straight from the
// store (the array's strategy is readDirect: its chunks are stored as
// their decoded bytes, little-endian, in a store that reads into the
// caller's buffer; one copy, without decoding whole chunks into the
// cache first) when the read has few runs; it reports false (having
// read nothing) otherwise. The kernel's
// page cache of the store's files is then the cache.
func (a *Array) readDirect(ctx context.Context, dst []byte, e0, e1 int64) (bool, error) {
	rr := a.raw
	size := int64(a.DataType().Size)
	// Each run costs a store call (open, read, close): allow two short
	// ones at the ends of the read, and otherwise runs of directMin bytes
	// on average. Reads of many short runs (chunks narrower than the
	// array's rows) decode whole chunks into the cache instead.
	maxRuns := 2 + (e1-e0)*size/directMin
	var rs []run
	errMany := errors.New("many runs")
	if err := a.runs(e0, e1, func(r run) error {
		if int64(len(rs)) >= maxRuns {
			return errMany
		}
		rs = append(rs, r)
		return nil
	}); err != nil || len(rs) == 0 {
		return false, nil
	}
	readRun := func(ctx context.Context, r run) error {
		c := fileChunk{a.storedChunk(r.chunk), rr}
		out := dst[(r.outOff-e0)*size : (r.outOff-e0+r.n)*size]
		pipe, err := a.PipelineOf(r.chunk) // a rectilinear chunk's own shape
		if err == nil {
			err = pipe.DecodeParts(ctx, c, [][]byte{out}, []int64{r.inOff * size})
		}
		switch {
		case errors.Is(err, store.ErrNotExist):
			a.FillElements(out)
			return nil
		case err != nil:
			return a.chunkError(c.key, err)
		}
		return nil
	}
	if len(rs) == 1 {
		return true, readRun(ctx, rs[0])
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(a.fetchWorkers())
	for _, r := range rs {
		g.Go(func() error { return readRun(gctx, r) })
	}
	return true, g.Wait()
}
