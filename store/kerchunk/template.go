package kerchunk

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// The templates of version 1 reference sets are Jinja templates. kerchunk
// writes only "{{name}}"; the specification's examples add arithmetic
// ("{{(i + 1) * 1000}}") and template functions ("{{f(c='text')}}"). This
// is that subset: expressions of integers, strings ('…' or "…"), names,
// + - * / // % ~, unary minus, parentheses and calls of templates with
// keyword arguments. Anything else ({% statements %}, filters, attributes)
// is an error naming the template.

// maxTemplateDepth bounds templates that call templates.
const maxTemplateDepth = 8

// maxRendered bounds the length of one rendered template.
const maxRendered = 1 << 16

// value is a template value: a string or an integer.
type value struct {
	s     string
	i     int64
	isInt bool
}

func intValue(i int64) value  { return value{i: i, isInt: true} }
func strValue(s string) value { return value{s: s} }
func (v value) String() string {
	if v.isInt {
		return strconv.FormatInt(v.i, 10)
	}
	return v.s
}

// renderer renders templates with the reference set's "templates".
type renderer struct {
	templates map[string]string
}

// render renders the template text with the variables vars (and the
// reference set's templates).
func (rd *renderer) render(text string, vars map[string]value) (string, error) {
	return rd.renderDepth(text, vars, 0)
}

func (rd *renderer) renderDepth(text string, vars map[string]value, depth int) (string, error) {
	if depth > maxTemplateDepth {
		return "", fmt.Errorf("templates nested more than %d deep", maxTemplateDepth)
	}
	if strings.Contains(text, "{%") {
		return "", fmt.Errorf("template %q: Jinja statements are not supported", text)
	}
	var b strings.Builder
	for {
		lit, rest, ok := strings.Cut(text, "{{")
		b.WriteString(lit)
		if !ok {
			break
		}
		expr, after, ok := strings.Cut(rest, "}}")
		if !ok {
			return "", fmt.Errorf("template %q: unclosed {{", text)
		}
		p := &parser{src: expr, rd: rd, vars: vars, depth: depth}
		v, err := p.parse()
		if err != nil {
			return "", fmt.Errorf("template %q: %v", text, err)
		}
		b.WriteString(v.String())
		if b.Len() > maxRendered {
			return "", fmt.Errorf("template %q renders to more than %d bytes", text, maxRendered)
		}
		text = after
	}
	return b.String(), nil
}

// renderInt renders an offset or length of a generator: a JSON number, or
// a string template that renders to an integer.
func (rd *renderer) renderInt(raw json.RawMessage, vars map[string]value) (int64, error) {
	var str string
	if json.Unmarshal(raw, &str) != nil {
		return jsonInt(raw)
	}
	out, err := rd.render(str, vars)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseInt(strings.TrimSpace(out), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q renders to %q, not an integer", str, out)
	}
	return n, nil
}

// parser evaluates one expression by recursive descent.
type parser struct {
	src   string
	pos   int
	rd    *renderer
	vars  map[string]value
	depth int
	steps int
}

func (p *parser) parse() (value, error) {
	v, err := p.expr()
	if err != nil {
		return value{}, err
	}
	p.space()
	if p.pos != len(p.src) {
		return value{}, fmt.Errorf("unexpected %q", p.src[p.pos:])
	}
	return v, nil
}

func (p *parser) space() {
	for p.pos < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
}

// peek reports whether the next token is op, consuming it if so.
func (p *parser) accept(op string) bool {
	p.space()
	if strings.HasPrefix(p.src[p.pos:], op) {
		p.pos += len(op)
		return true
	}
	return false
}

var errTooComplex = errors.New("kerchunk: expression too long")

// expr := term (("+" | "-" | "~") term)*
func (p *parser) expr() (value, error) {
	if p.steps++; p.steps > 1000 {
		return value{}, errTooComplex
	}
	v, err := p.term()
	for err == nil {
		var op byte
		switch {
		case p.accept("+"):
			op = '+'
		case p.accept("-"):
			op = '-'
		case p.accept("~"):
			op = '~'
		default:
			return v, nil
		}
		var w value
		if w, err = p.term(); err != nil {
			break
		}
		v, err = arith(op, v, w)
	}
	return value{}, err
}

// term := unary (("*" | "//" | "/" | "%") unary)*
func (p *parser) term() (value, error) {
	v, err := p.unary()
	for err == nil {
		var op byte
		switch {
		case p.accept("*"):
			op = '*'
		case p.accept("//"):
			op = 'f'
		case p.accept("/"):
			op = '/'
		case p.accept("%"):
			op = '%'
		default:
			return v, nil
		}
		var w value
		if w, err = p.unary(); err != nil {
			break
		}
		v, err = arith(op, v, w)
	}
	return value{}, err
}

// unary := "-" unary | primary
func (p *parser) unary() (value, error) {
	if p.steps++; p.steps > 1000 {
		return value{}, errTooComplex
	}
	if p.accept("-") {
		v, err := p.unary()
		if err != nil {
			return v, err
		}
		return arith('-', intValue(0), v)
	}
	return p.primary()
}

// primary := integer | string | name | name "(" kwargs ")" | "(" expr ")"
func (p *parser) primary() (value, error) {
	p.space()
	if p.pos >= len(p.src) {
		return value{}, errors.New("expression ends early")
	}
	c := p.src[p.pos]
	switch {
	case c == '(':
		p.pos++
		v, err := p.expr()
		if err != nil {
			return v, err
		}
		if !p.accept(")") {
			return value{}, errors.New("missing )")
		}
		return v, nil
	case c == '\'' || c == '"':
		end := strings.IndexByte(p.src[p.pos+1:], c)
		if end < 0 {
			return value{}, errors.New("unclosed string")
		}
		s := p.src[p.pos+1 : p.pos+1+end]
		p.pos += end + 2
		return strValue(s), nil
	case '0' <= c && c <= '9':
		start := p.pos
		for p.pos < len(p.src) && '0' <= p.src[p.pos] && p.src[p.pos] <= '9' {
			p.pos++
		}
		n, err := strconv.ParseInt(p.src[start:p.pos], 10, 64)
		if err != nil {
			return value{}, fmt.Errorf("integer %s: %v", p.src[start:p.pos], err)
		}
		return intValue(n), nil
	case c == '_' || 'a' <= c|0x20 && c|0x20 <= 'z':
		name := p.name()
		if p.accept("(") {
			return p.call(name)
		}
		if v, ok := p.vars[name]; ok {
			return v, nil
		}
		t, ok := p.rd.templates[name]
		if !ok {
			return value{}, fmt.Errorf("undefined name %q", name)
		}
		if strings.Contains(t, "{{") {
			// A template function used without a call renders with no
			// arguments.
			out, err := p.rd.renderDepth(t, nil, p.depth+1)
			return strValue(out), err
		}
		return strValue(t), nil
	}
	return value{}, fmt.Errorf("unexpected %q", p.src[p.pos:])
}

func (p *parser) name() string {
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c != '_' && !('a' <= c|0x20 && c|0x20 <= 'z') && !('0' <= c && c <= '9') {
			break
		}
		p.pos++
	}
	return p.src[start:p.pos]
}

// call renders the template name with keyword arguments, as fsspec calls
// a template that holds "{{": its arguments are its only variables.
func (p *parser) call(name string) (value, error) {
	t, ok := p.rd.templates[name]
	if !ok {
		return value{}, fmt.Errorf("undefined template %q", name)
	}
	args := map[string]value{}
	for !p.accept(")") {
		if len(args) > 0 && !p.accept(",") {
			return value{}, fmt.Errorf("call of %q: expected , or )", name)
		}
		p.space()
		arg := p.name()
		if arg == "" || !p.accept("=") {
			return value{}, fmt.Errorf("call of %q: arguments are name=value", name)
		}
		v, err := p.expr()
		if err != nil {
			return value{}, err
		}
		args[arg] = v
	}
	out, err := p.rd.renderDepth(t, args, p.depth+1)
	return strValue(out), err
}

// arith applies a binary operator as Jinja (Python) does to integers and
// strings, refusing overflow.
func arith(op byte, a, b value) (value, error) {
	if op == '~' {
		return strValue(a.String() + b.String()), nil
	}
	if !a.isInt || !b.isInt {
		if op == '+' && !a.isInt && !b.isInt {
			if len(a.s)+len(b.s) > maxRendered {
				return value{}, errTooComplex
			}
			return strValue(a.s + b.s), nil
		}
		return value{}, fmt.Errorf("operator %c on a string", op)
	}
	x, y := a.i, b.i
	switch op {
	case '+':
		if (y > 0 && x > math.MaxInt64-y) || (y < 0 && x < math.MinInt64-y) {
			return value{}, errors.New("integer overflow")
		}
		return intValue(x + y), nil
	case '-':
		if (y < 0 && x > math.MaxInt64+y) || (y > 0 && x < math.MinInt64+y) {
			return value{}, errors.New("integer overflow")
		}
		return intValue(x - y), nil
	case '*':
		if x != 0 && y != 0 {
			r := x * y
			if r/y != x || (x == -1 && y == math.MinInt64) || (y == -1 && x == math.MinInt64) {
				return value{}, errors.New("integer overflow")
			}
			return intValue(r), nil
		}
		return intValue(0), nil
	}
	if y == 0 {
		return value{}, errors.New("division by zero")
	}
	if x == math.MinInt64 && y == -1 {
		return value{}, errors.New("integer overflow")
	}
	q, r := x/y, x%y
	if r != 0 && (r < 0) != (y < 0) { // Python floors
		q, r = q-1, r+y
	}
	switch op {
	case 'f':
		return intValue(q), nil
	case '%':
		return intValue(r), nil
	default: // '/': true division; an integer result only
		if r != 0 {
			return value{}, fmt.Errorf("%d / %d is not an integer", x, y)
		}
		return intValue(q), nil
	}
}
