package icechunktest

// flex.go: a FlexBuffers writer (flatbuffers.dev/flexbuffers, "Binary
// encoding") for the spec 2 repo info's config, as serde's flexbuffers
// serializer writes Icechunk's RepositoryConfig: structs and maps as
// maps with sorted keys, an enum's newtype variant as a map of its name
// to its value, None as null. Every width is 8 bytes, which the format
// allows; shares no code with the reader in package icechunk.

import (
	"encoding/binary"
	"sort"
)

// FlexBuffers types written.
const (
	fxNull   = 0
	fxUint   = 2
	fxString = 5
	fxMap    = 9
	fxBool   = 26
	fxWidth8 = 3 // bit width code of 8 bytes
)

type flexWriter struct{ buf []byte }

// flexVal is a written value: inline (its bits) or the position of what
// it points to, and its packed type.
type flexVal struct {
	packed byte
	inline bool
	v      uint64
}

func (f *flexWriter) align() {
	for len(f.buf)%8 != 0 {
		f.buf = append(f.buf, 0)
	}
}

func (f *flexWriter) u64(v uint64) { f.buf = binary.LittleEndian.AppendUint64(f.buf, v) }

// value writes x (nil, bool, uint64, string, map[string]any) and what it
// holds.
func (f *flexWriter) value(x any) flexVal {
	switch x := x.(type) {
	case nil:
		return flexVal{packed: fxNull << 2, inline: true}
	case bool:
		v := uint64(0)
		if x {
			v = 1
		}
		return flexVal{packed: fxBool << 2, inline: true, v: v}
	case uint64:
		return flexVal{packed: fxUint<<2 | fxWidth8, inline: true, v: x}
	case string:
		f.align()
		f.u64(uint64(len(x)))
		pos := len(f.buf)
		f.buf = append(append(f.buf, x...), 0)
		return flexVal{packed: fxString<<2 | fxWidth8, v: uint64(pos)}
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		vals := make([]flexVal, len(keys))
		for i, k := range keys {
			vals[i] = f.value(x[k])
		}
		keyPos := make([]int, len(keys))
		for i, k := range keys {
			keyPos[i] = len(f.buf)
			f.buf = append(append(f.buf, k...), 0)
		}
		// The keys: a typed vector of offsets to them.
		f.align()
		f.u64(uint64(len(keys)))
		kv := len(f.buf)
		for i := range keys {
			f.u64(uint64(kv + 8*i - keyPos[i]))
		}
		// The values: the keys vector's offset and width, the length,
		// the values, their types.
		p0 := len(f.buf)
		f.u64(uint64(p0 - kv))
		f.u64(8)
		f.u64(uint64(len(keys)))
		vp := len(f.buf)
		for i, v := range vals {
			if v.inline {
				f.u64(v.v)
			} else {
				f.u64(uint64(vp+8*i) - v.v)
			}
		}
		for _, v := range vals {
			f.buf = append(f.buf, v.packed)
		}
		return flexVal{packed: fxMap<<2 | fxWidth8, v: uint64(vp)}
	}
	panic("icechunktest: no FlexBuffers encoding for this value")
}

// flexBytes is the FlexBuffer of x: x, then the root (8 bytes), its
// packed type and its width.
func flexBytes(x any) []byte {
	f := &flexWriter{}
	v := f.value(x)
	f.align()
	if v.inline {
		f.u64(v.v)
	} else {
		f.u64(uint64(len(f.buf)) - v.v)
	}
	return append(f.buf, v.packed, 8)
}

// flexConfig is a RepositoryConfig with containers cs as serde writes
// it: each store a map of its kind to its settings ("true"/"false" as
// booleans and "null" as null, except an http store's, which are
// strings), or to "" for a store without settings of a struct.
func flexConfig(cs []Container) []byte {
	vcc := map[string]any{}
	for _, c := range cs {
		settings := map[string]any{}
		for k, v := range c.Settings {
			switch {
			case c.Store == "http":
				settings[k] = v
			case v == "true" || v == "false":
				settings[k] = v == "true"
			case v == "null":
				settings[k] = nil
			default:
				settings[k] = v
			}
		}
		var st any = map[string]any{c.Store: settings}
		if c.Store == "local_file_system" {
			st = map[string]any{c.Store: ""}
		}
		vcc[c.Name] = map[string]any{"name": c.Name, "url_prefix": c.Prefix, "store": st}
	}
	return flexBytes(map[string]any{
		"inline_chunk_threshold_bytes": uint64(12), "compression": nil, "caching": nil, "storage": nil,
		"manifest": nil, "virtual_chunk_containers": vcc,
	})
}
