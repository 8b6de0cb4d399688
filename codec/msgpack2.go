package codec

import (
	"encoding/binary"
	"fmt"
	"unicode/utf8"
)

func init() {
	Register(newMsgPack2, "msgpack2", "numcodecs.msgpack2")
}

// MsgPack2 is numcodecs' MsgPack codec ("msgpack2") for object arrays of
// strings or byte strings, as an array→bytes codec: a MessagePack array of
// the elements (nested lists for more than one dimension), the NumPy type
// string "|O" and the shape. An array of ObjectType reads any elements but
// binary strings (each as JSON: numbers, nil as null, lists, maps with
// string keys); in an array of strings or bytes, other elements are
// unsupported. Encoding (strings and bytes) writes what msgpack-python's
// packb writes.
type MsgPack2 struct {
	UseBinType bool // use_bin_type: byte strings as bin, str8 headers
}

func newMsgPack2(cfg Config) (Codec, error) {
	c := MsgPack2{UseBinType: true}
	if _, err := cfg.Decode("msgpack2", "use_bin_type", &c.UseBinType); err != nil {
		return nil, err
	}
	return c, nil
}

// Name implements Codec.
func (MsgPack2) Name() string { return "msgpack2" }

// EncodedSize implements ArrayToBytes.
func (MsgPack2) EncodedSize(ArraySpec) int { return -1 }

// mpValue is a parsed MessagePack value of the kinds this codec reads.
type mpValue struct {
	kind  byte // 's' str, 'b' bin, 'a' array, 'i' unsigned integer, 'j' any other (bytes: its JSON)
	bytes []byte
	items []mpValue
	n     uint64
}

// mpParse parses one value from p, returning it and the rest of p.
func mpParse(p []byte, depth int) (mpValue, []byte, error) {
	if len(p) == 0 {
		return mpValue{}, nil, fmt.Errorf("truncated")
	}
	if depth > 32 {
		return mpValue{}, nil, fmt.Errorf("nested too deeply")
	}
	b, p := p[0], p[1:]
	uint := func(size int) (uint64, []byte, error) {
		if len(p) < size {
			return 0, nil, fmt.Errorf("truncated")
		}
		var v uint64
		for _, c := range p[:size] {
			v = v<<8 | uint64(c)
		}
		return v, p[size:], nil
	}
	var kind byte
	var n uint64
	var err error
	switch {
	case b <= 0x7f:
		return mpValue{kind: 'i', n: uint64(b)}, p, nil
	case b >= 0xcc && b <= 0xcf:
		n, p, err = uint(1 << (b - 0xcc))
		return mpValue{kind: 'i', n: n}, p, err
	case b >= 0xa0 && b <= 0xbf:
		kind, n = 's', uint64(b&0x1f)
	case b >= 0xd9 && b <= 0xdb:
		kind = 's'
		n, p, err = uint(1 << (b - 0xd9))
	case b >= 0xc4 && b <= 0xc6:
		kind = 'b'
		n, p, err = uint(1 << (b - 0xc4))
	case b >= 0x90 && b <= 0x9f:
		kind, n = 'a', uint64(b&0x0f)
	case b == 0xdc || b == 0xdd:
		kind = 'a'
		n, p, err = uint(2 << (b - 0xdc))
	default:
		return mpOther(b, p, depth)
	}
	if err != nil {
		return mpValue{}, nil, err
	}
	if n > uint64(len(p)) { // every array item takes a byte at least
		return mpValue{}, nil, fmt.Errorf("length %d, only %d bytes left", n, len(p))
	}
	if kind != 'a' {
		return mpValue{kind: kind, bytes: p[:n]}, p[n:], nil
	}
	v := mpValue{kind: 'a', items: make([]mpValue, n)}
	for i := range v.items {
		if v.items[i], p, err = mpParse(p, depth+1); err != nil {
			return mpValue{}, nil, err
		}
	}
	return v, p, nil
}

// Decode implements ArrayToBytes.
func (c MsgPack2) Decode(data []byte, decoded ArraySpec) ([]byte, error) {
	if !decoded.DataType.Variable() {
		return nil, Unsupportedf("msgpack2 codec for fixed-size data type %s", decoded.DataType.Name)
	}
	corrupt := func(err error) error {
		if _, ok := err.(*UnsupportedError); ok {
			return err
		}
		return Corruptf("msgpack2", "%w", err)
	}
	top, rest, err := mpParse(data, 0)
	if err != nil {
		return nil, corrupt(err)
	}
	if len(rest) != 0 {
		return nil, Corruptf("msgpack2", "%d bytes after the data", len(rest))
	}
	items := top.items
	if top.kind != 'a' || len(items) < 2 {
		return nil, Corruptf("msgpack2", "not a list with a type and a shape")
	}
	dtype, shapeV := items[len(items)-2], items[len(items)-1]
	if dtype.kind != 's' || string(dtype.bytes) != "|O" {
		return nil, Unsupportedf("msgpack2 data of type %q", dtype.bytes)
	}
	if shapeV.kind != 'a' || len(shapeV.items) == 0 {
		return nil, Corruptf("msgpack2", "bad shape")
	}
	n := decoded.NumElements()
	shape := make([]int, len(shapeV.items))
	count := 1
	for i, d := range shapeV.items {
		if d.kind != 'i' || d.n > uint64(n) || (d.n > 0 && count > n/int(d.n)) {
			return nil, Corruptf("msgpack2", "shape does not hold %d elements", n)
		}
		shape[i] = int(d.n)
		count *= shape[i]
	}
	if count != n {
		return nil, Corruptf("msgpack2", "shape %v, want %d elements", shape, n)
	}
	out := binary.LittleEndian.AppendUint32(nil, uint32(n))
	var walk func(list []mpValue, depth int) error
	walk = func(list []mpValue, depth int) error {
		if len(list) != shape[depth] {
			return Corruptf("msgpack2", "%d items in dimension %d of shape %v", len(list), depth, shape)
		}
		for _, v := range list {
			if depth < len(shape)-1 {
				if v.kind != 'a' {
					return Corruptf("msgpack2", "dimension %d is not a list", depth+1)
				}
				if err := walk(v.items, depth+1); err != nil {
					return err
				}
				continue
			}
			elem := v.bytes
			switch {
			case decoded.DataType.Name == ObjectType:
				var err error
				if elem, err = mpJSON(v); err != nil {
					return err
				}
			case v.kind != 's' && v.kind != 'b':
				return Unsupportedf("msgpack2 element that is not a string in an array of %s", decoded.DataType.Name)
			}
			out = binary.LittleEndian.AppendUint32(out, uint32(len(elem)))
			out = append(out, elem...)
		}
		return nil
	}
	if err := walk(items[:len(items)-2], 0); err != nil {
		return nil, err
	}
	return out, nil
}

// Encode implements ArrayToBytes. Elements of a "bytes" array are written
// as bin (with use_bin_type), others as str.
func (c MsgPack2) Encode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	if decoded.DataType.Name == ObjectType {
		return nil, Unsupportedf("msgpack2 encoding of object arrays")
	}
	if !decoded.DataType.Variable() {
		return nil, Unsupportedf("msgpack2 codec for fixed-size data type %s", decoded.DataType.Name)
	}
	elems, err := splitVlen("msgpack2", chunk, decoded.NumElements())
	if err != nil {
		return nil, err
	}
	shape := decoded.Shape
	if len(shape) == 0 {
		shape = []int{len(elems)}
	}
	bin := decoded.DataType.Name == "bytes" && c.UseBinType
	var out []byte
	next := 0
	var write func(depth int) error
	write = func(depth int) error {
		for i := 0; i < shape[depth]; i++ {
			if depth < len(shape)-1 {
				out = mpArrayHeader(out, shape[depth+1])
				if err := write(depth + 1); err != nil {
					return err
				}
				continue
			}
			e := elems[next]
			next++
			if bin {
				out = mpHeader(out, 0xc4, 0, len(e))
			} else {
				if !utf8.Valid(e) {
					return fmt.Errorf("msgpack2: element %d is not valid UTF-8", next-1)
				}
				out = c.strHeader(out, len(e))
			}
			out = append(out, e...)
		}
		return nil
	}
	out = mpArrayHeader(out, shape[0]+2)
	if err := write(0); err != nil {
		return nil, err
	}
	out = c.strHeader(out, 2)
	out = append(out, "|O"...)
	out = mpArrayHeader(out, len(shape))
	for _, d := range shape {
		switch {
		case d < 0x80:
			out = append(out, byte(d))
		case d <= 0xff:
			out = append(out, 0xcc, byte(d))
		case d <= 0xffff:
			out = binary.BigEndian.AppendUint16(append(out, 0xcd), uint16(d))
		case uint64(d) <= 0xffffffff:
			out = binary.BigEndian.AppendUint32(append(out, 0xce), uint32(d))
		default:
			out = binary.BigEndian.AppendUint64(append(out, 0xcf), uint64(d))
		}
	}
	return out, nil
}

// strHeader appends the header of a str of n bytes (no str8 without
// use_bin_type, as in the old MessagePack spec).
func (c MsgPack2) strHeader(out []byte, n int) []byte {
	if n < 32 {
		return append(out, 0xa0|byte(n))
	}
	if n < 256 && !c.UseBinType {
		return mpHeader(out, 0xd9, 1, n)
	}
	return mpHeader(out, 0xd9, 0, n)
}

// mpHeader appends the smallest header of family first (str8 0xd9, bin8
// 0xc4) for n bytes, starting from the size class min (0: 8 bits, 1: 16).
func mpHeader(out []byte, first byte, min, n int) []byte {
	switch {
	case min == 0 && n <= 0xff:
		return append(out, first, byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(out, first+1), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(out, first+2), uint32(n))
}

func mpArrayHeader(out []byte, n int) []byte {
	switch {
	case n < 16:
		return append(out, 0x90|byte(n))
	case n <= 0xffff:
		return binary.BigEndian.AppendUint16(append(out, 0xdc), uint16(n))
	}
	return binary.BigEndian.AppendUint32(append(out, 0xdd), uint32(n))
}
