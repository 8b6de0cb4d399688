package kerchunk

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"

	"github.com/zarrfs/zarrfs/store"
)

// ErrNotReferences is matched by the error of OpenJSON for a document that
// is not a reference set (not a JSON object, or of an unknown version).
var ErrNotReferences = errors.New("kerchunk: not a reference set")

// OpenJSON reads a JSON reference file (version 0 or 1) whose bytes are
// data. A malformed reference makes only its own key fail; a document that
// is not a reference set at all is an error matching ErrNotReferences.
func OpenJSON(data []byte, opts Options) (*Store, error) {
	s := newStore(opts)
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("%s: %w: %v", s, ErrNotReferences, err)
	}
	refs := top
	s.kind = "JSON, version 0"
	var gens []json.RawMessage
	templates := map[string]string{}
	if v, ok := top["version"]; ok {
		var version int
		if err := json.Unmarshal(v, &version); err != nil || version != 1 {
			return nil, fmt.Errorf("%s: %w: version %s (zarrfs reads versions 0 and 1)", s, ErrNotReferences, v)
		}
		refs, s.kind = nil, "JSON, version 1"
		if err := json.Unmarshal(top["refs"], &refs); err != nil {
			return nil, fmt.Errorf("%s: %w: \"refs\" is not an object", s, ErrNotReferences)
		}
		if raw, ok := top["templates"]; ok && string(raw) != "null" {
			var tm map[string]json.RawMessage
			if err := json.Unmarshal(raw, &tm); err != nil {
				return nil, fmt.Errorf("%s: \"templates\" is not an object: %w", s, err)
			}
			for k, v := range tm {
				var str string
				if json.Unmarshal(v, &str) != nil {
					str = string(v) // a number, say: as Python's str() would give it
				}
				templates[k] = str
			}
		}
		if raw, ok := top["gen"]; ok && string(raw) != "null" {
			if err := json.Unmarshal(raw, &gens); err != nil {
				return nil, fmt.Errorf("%s: \"gen\" is not a list: %w", s, err)
			}
		}
	}
	index := map[string]string{}
	rd := &renderer{templates: templates}
	for k, v := range refs {
		// A key that is not a valid store key ("../x", "/etc") can never be
		// asked for: leave it out, as consolidated metadata does.
		if store.ValidateKey(k) != nil {
			continue
		}
		s.refs[k] = s.parseRef(v, rd, index)
	}
	budget := MaxGenEntries
	for i, g := range gens {
		if err := s.expandGen(g, rd, index, &budget); err != nil {
			var spec struct {
				Key string `json:"key"`
			}
			json.Unmarshal(g, &spec)
			s.bad = append(s.bad, badPrefix{prefix: literalFolder(spec.Key), err: fmt.Errorf("%w: gen %d: %v", ErrBadReference, i, err)})
		}
	}
	s.finish()
	return s, nil
}

// parseRef reads one value of "refs".
func (s *Store) parseRef(v json.RawMessage, rd *renderer, index map[string]string) ref {
	bad := func(format string, args ...any) ref {
		return ref{err: fmt.Errorf("%w: %s", ErrBadReference, fmt.Sprintf(format, args...))}
	}
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return bad("empty value")
	}
	switch v[0] {
	case '"':
		var str string
		if err := json.Unmarshal(v, &str); err != nil {
			return bad("%v", err)
		}
		b, err := inline(str)
		if err != nil {
			return bad("%v", err)
		}
		return ref{inline: true, data: b}
	case '{':
		// Not in the specification, but written by some tools: a metadata
		// document as a JSON object. Its bytes are the document.
		return ref{inline: true, data: bytes.Clone(v)}
	case '[':
	default:
		return bad("a value must be a string or a list, not %.20s", v)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(v, &list); err != nil {
		return bad("%v", err)
	}
	if len(list) != 1 && len(list) != 3 {
		return bad("a reference list has 1 or 3 members, not %d", len(list))
	}
	var u string
	if err := json.Unmarshal(list[0], &u); err != nil || string(list[0]) == "null" {
		return bad("the URL %.40s is not a string", list[0])
	}
	if strings.Contains(u, "{{") {
		r, err := rd.render(u, nil)
		if err != nil {
			return bad("URL %q: %v", u, err)
		}
		u = r
	}
	rf := ref{url: s.internURL(u, index), n: -1}
	if len(list) == 3 {
		off, err1 := jsonInt(list[1])
		n, err2 := jsonInt(list[2])
		if err := errors.Join(err1, err2); err != nil {
			return bad("%v", err)
		}
		if err := checkRange(off, n); err != nil {
			return bad("%v", err)
		}
		rf.off, rf.n = off, n
	}
	return rf
}

// checkRange checks a reference's offset and length.
func checkRange(off, n int64) error {
	switch {
	case off < 0:
		return fmt.Errorf("negative offset %d", off)
	case n < 0:
		return fmt.Errorf("negative length %d", n)
	case n > MaxReference:
		return fmt.Errorf("length %d is more than the %d bytes a reference may select", n, MaxReference)
	case off > math.MaxInt64-n:
		return fmt.Errorf("offset %d + length %d overflows", off, n)
	}
	return nil
}

// inline returns the bytes of an inline value: "base64:…" decoded, any
// other string as its UTF-8 bytes.
func inline(str string) ([]byte, error) {
	if b64, ok := strings.CutPrefix(str, "base64:"); ok {
		b, err := base64.StdEncoding.DecodeString(b64)
		if err != nil {
			// Python's b64decode also takes unpadded and URL-safe input
			// in some versions; try those before giving up.
			if b2, err2 := base64.RawStdEncoding.DecodeString(strings.TrimRight(b64, "=")); err2 == nil {
				return b2, nil
			}
			return nil, fmt.Errorf("base64: %v", err)
		}
		return b, nil
	}
	return []byte(str), nil
}

// jsonInt reads an integer written as a JSON number or as a string of one
// (the way templates give them).
func jsonInt(raw json.RawMessage) (int64, error) {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		raw = json.RawMessage(strings.TrimSpace(str))
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		// 1e3 or 1000.0: integers written as floats.
		f, ferr := strconv.ParseFloat(string(raw), 64)
		if ferr != nil || f != math.Trunc(f) || math.Abs(f) >= 1<<63 {
			return 0, fmt.Errorf("%.40s is not an integer", raw)
		}
		return int64(f), nil
	}
	return n, nil
}

// genSpec is one entry of "gen".
type genSpec struct {
	Key        string                     `json:"key"`
	URL        string                     `json:"url"`
	Offset     json.RawMessage            `json:"offset"`
	Length     json.RawMessage            `json:"length"`
	Dimensions map[string]json.RawMessage `json:"dimensions"`
}

// dimension is the values one generator dimension takes: a list of values,
// or the integers of range(start, stop, step).
type dimension struct {
	name              string
	list              []value
	start, stop, step int64
	n                 int64 // the number of values
}

func (d *dimension) at(i int64) value {
	if d.list != nil {
		return d.list[i]
	}
	return intValue(d.start + i*d.step)
}

// expandGen adds the references one generator makes, counting them against
// *budget before making any.
func (s *Store) expandGen(raw json.RawMessage, rd *renderer, index map[string]string, budget *int) error {
	var g genSpec
	if err := json.Unmarshal(raw, &g); err != nil {
		return err
	}
	if g.Key == "" || g.URL == "" {
		return errors.New("a generator needs a key and a url")
	}
	if (g.Offset == nil) != (g.Length == nil) {
		return errors.New("a generator needs both offset and length, or neither")
	}
	dims := make([]*dimension, 0, len(g.Dimensions))
	total, over := int64(1), false
	for name, v := range g.Dimensions {
		d, err := parseDimension(name, v)
		if err != nil {
			return err
		}
		hi, lo := bits.Mul64(uint64(total), uint64(d.n))
		if hi != 0 || lo > uint64(*budget) {
			over = true
		} else {
			total = int64(lo)
		}
		dims = append(dims, d)
	}
	if len(dims) == 0 {
		return errors.New("a generator needs dimensions")
	}
	if over {
		// Too many to expand: look its keys up as they are asked for,
		// when the key template can be read backwards.
		lg, err := newLazyGen(&g, dims, rd)
		if err != nil {
			return fmt.Errorf("more than %d references (zarrfs expands at most %d in all), and %v", *budget, MaxGenEntries, err)
		}
		s.lazy = append(s.lazy, lg)
		return nil
	}
	*budget -= int(total)
	vars := make(map[string]value, len(dims))
	for i := range total {
		j := i
		for k := len(dims) - 1; k >= 0; k-- {
			vars[dims[k].name] = dims[k].at(j % dims[k].n)
			j /= dims[k].n
		}
		key, err := rd.render(g.Key, vars)
		if err != nil {
			return fmt.Errorf("key: %v", err)
		}
		if store.ValidateKey(key) != nil {
			continue
		}
		u, err := rd.render(g.URL, vars)
		if err != nil {
			s.refs[key] = ref{err: fmt.Errorf("%w: url: %v", ErrBadReference, err)}
			continue
		}
		rf := ref{url: s.internURL(u, index), n: -1}
		if g.Offset != nil {
			off, err1 := rd.renderInt(g.Offset, vars)
			n, err2 := rd.renderInt(g.Length, vars)
			err := errors.Join(err1, err2)
			if err == nil {
				err = checkRange(off, n)
			}
			if err != nil {
				s.refs[key] = ref{err: fmt.Errorf("%w: %v", ErrBadReference, err)}
				continue
			}
			rf.off, rf.n = off, n
		}
		s.refs[key] = rf
	}
	return nil
}

// parseDimension reads one member of a generator's "dimensions".
func parseDimension(name string, raw json.RawMessage) (*dimension, error) {
	d := &dimension{name: name}
	var list []json.RawMessage
	if json.Unmarshal(raw, &list) == nil && list != nil {
		for _, item := range list {
			var str string
			if json.Unmarshal(item, &str) == nil {
				d.list = append(d.list, strValue(str))
				continue
			}
			n, err := jsonInt(item)
			if err != nil {
				return nil, fmt.Errorf("dimension %q: %v", name, err)
			}
			d.list = append(d.list, intValue(n))
		}
		if d.list == nil {
			d.list = []value{}
		}
		d.n = int64(len(d.list))
		return d, nil
	}
	var r struct {
		Start, Stop, Step json.RawMessage
	}
	if err := json.Unmarshal(raw, &r); err != nil {
		return nil, fmt.Errorf("dimension %q is neither a list nor a range", name)
	}
	if r.Stop == nil {
		return nil, fmt.Errorf("dimension %q has no stop", name)
	}
	var err error
	d.step = 1
	if r.Start != nil {
		if d.start, err = jsonInt(r.Start); err != nil {
			return nil, fmt.Errorf("dimension %q: start: %v", name, err)
		}
	}
	if d.stop, err = jsonInt(r.Stop); err != nil {
		return nil, fmt.Errorf("dimension %q: stop: %v", name, err)
	}
	if r.Step != nil {
		if d.step, err = jsonInt(r.Step); err != nil {
			return nil, fmt.Errorf("dimension %q: step: %v", name, err)
		}
	}
	// len(range(start, stop, step)), without overflow.
	switch {
	case d.step == 0:
		return nil, fmt.Errorf("dimension %q: step 0", name)
	case d.step > 0 && d.stop > d.start:
		d.n = int64((uint64(d.stop-d.start) + uint64(d.step) - 1) / uint64(d.step))
	case d.step < 0 && d.stop < d.start:
		d.n = int64((uint64(d.start-d.stop) + uint64(-d.step) - 1) / uint64(-d.step))
	}
	if d.n < 0 {
		return nil, fmt.Errorf("dimension %q: too many values", name)
	}
	return d, nil
}

// literalFolder returns the folder part of a key template before its first
// template expression ("data/{{i}}.0" → "data/"; "{{v}}/0" → "").
func literalFolder(tmpl string) string {
	lit, _, _ := strings.Cut(tmpl, "{{")
	if i := strings.LastIndexByte(lit, '/'); i >= 0 {
		return lit[:i+1]
	}
	return ""
}
