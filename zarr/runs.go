package zarr

// Runs: the stretches of elements a read covers that are contiguous both
// in a chunk and in the array's C-order content (regular and rectilinear
// chunk grids).

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
