package kerchunk

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// lazyGen is a generator whose references are made when their keys are
// asked for: its key template is literal text and bare dimension names
// ("data/{{i}}.{{j}}"), each name once and a literal between any two, so
// that a key gives back the values that made it.
type lazyGen struct {
	spec   *genSpec
	rd     *renderer
	re     *regexp.Regexp
	dims   []*dimension // in the order they appear in the key
	lists  []map[string]int64
	folder string // the folder of the template's literal start, for listings
}

var bareName = regexp.MustCompile(`^\s*([A-Za-z_][A-Za-z_0-9]*)\s*$`)

func newLazyGen(g *genSpec, dims []*dimension, rd *renderer) (*lazyGen, error) {
	byName := map[string]*dimension{}
	for _, d := range dims {
		byName[d.name] = d
	}
	lg := &lazyGen{spec: g, rd: rd, folder: literalFolder(g.Key)}
	var re strings.Builder
	re.WriteString("^")
	rest := g.Key
	prevVar := false
	for {
		lit, after, ok := strings.Cut(rest, "{{")
		if lit == "" && prevVar && ok {
			return nil, errors.New("its key template has two names with nothing between them")
		}
		re.WriteString(regexp.QuoteMeta(lit))
		if !ok {
			break
		}
		expr, after2, ok := strings.Cut(after, "}}")
		m := bareName.FindStringSubmatch(expr)
		if !ok || m == nil {
			return nil, errors.New("its key template is not names and text only")
		}
		d := byName[m[1]]
		if d == nil {
			return nil, fmt.Errorf("its key names %q, not a dimension", m[1])
		}
		delete(byName, m[1])
		lg.dims = append(lg.dims, d)
		var list map[string]int64
		if d.list != nil {
			list = make(map[string]int64, len(d.list))
			for i, v := range d.list {
				list[v.String()] = int64(i) // the last of equal values, as a dict keeps it
			}
			re.WriteString("(.+?)")
		} else {
			re.WriteString("(-?[0-9]+)")
		}
		lg.lists = append(lg.lists, list)
		rest, prevVar = after2, true
	}
	if len(byName) > 0 {
		return nil, errors.New("its key does not name every dimension")
	}
	re.WriteString("$")
	var err error
	if lg.re, err = regexp.Compile(re.String()); err != nil {
		return nil, err
	}
	return lg, nil
}

// lookup returns the reference of key when this generator makes it.
func (lg *lazyGen) lookup(key string) (ref, bool) {
	m := lg.re.FindStringSubmatch(key)
	if m == nil {
		return ref{}, false
	}
	vars := make(map[string]value, len(lg.dims))
	for i, d := range lg.dims {
		text := m[i+1]
		if lg.lists[i] != nil {
			j, ok := lg.lists[i][text]
			if !ok {
				return ref{}, false
			}
			vars[d.name] = d.list[j]
			continue
		}
		v, err := strconv.ParseInt(text, 10, 64)
		if err != nil || strconv.FormatInt(v, 10) != text {
			return ref{}, false
		}
		// v = start + k*step for some 0 <= k < n.
		diff := uint64(v - d.start)
		step := uint64(d.step)
		if d.step < 0 {
			diff, step = uint64(d.start-v), uint64(-d.step)
		}
		if (d.step > 0 && v < d.start) || (d.step < 0 && v > d.start) || diff%step != 0 || diff/step >= uint64(d.n) {
			return ref{}, false
		}
		vars[d.name] = intValue(v)
	}
	g := lg.spec
	bad := func(err error) (ref, bool) { return ref{err: fmt.Errorf("%w: %v", ErrBadReference, err)}, true }
	u, err := lg.rd.render(g.URL, vars)
	if err != nil {
		return bad(err)
	}
	rf := ref{url: u, n: -1}
	if g.Offset != nil {
		off, err1 := lg.rd.renderInt(g.Offset, vars)
		n, err2 := lg.rd.renderInt(g.Length, vars)
		err := errors.Join(err1, err2)
		if err == nil {
			err = checkRange(off, n)
		}
		if err != nil {
			return bad(err)
		}
		rf.off, rf.n = off, n
	}
	return rf, true
}

// firstURL renders the URL of the generator's first reference.
func (lg *lazyGen) firstURL() (string, bool) {
	vars := map[string]value{}
	for _, d := range lg.dims {
		if d.n == 0 {
			return "", false
		}
		vars[d.name] = d.at(0)
	}
	u, err := lg.rd.render(lg.spec.URL, vars)
	return u, err == nil
}
