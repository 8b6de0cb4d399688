package codec

import (
	"encoding/json"
	"fmt"
)

// zarr-python 3 stores numcodecs filters in Zarr v3 metadata as array→array
// codecs named "numcodecs.<id>", whose configuration is numcodecs' without
// the id, and which see the chunk as an array of its data type (in memory,
// little-endian). NumcodecsArray adapts the bytes→bytes filters of this
// package to that: the type members of the configuration are taken as
// little-endian, and a missing decoded type is the array's.

func init() {
	for _, a := range []struct{ id, typeKey, encKey string }{
		{"delta", "dtype", "astype"},
		{"fixedscaleoffset", "dtype", "astype"},
		{"quantize", "dtype", "astype"},
		{"astype", "decode_dtype", "encode_dtype"},
		{"packbits", "", ""},
	} {
		a := a
		Register(func(cfg Config) (Codec, error) {
			c := NumcodecsArray{ID: a.id, Config: cfg, typeKey: a.typeKey, encKey: a.encKey}
			// Check the configuration as far as it goes without the
			// array's data type.
			spec := ArraySpec{DataType: DataType{Name: "bool", Size: 1}}
			if name := typeName(cfg, a.typeKey); name != "" {
				t, err := ParseNumpyType(name)
				if err != nil {
					return nil, fmt.Errorf("%s: %s: %w", c.Name(), a.typeKey, err)
				}
				spec.DataType = DataType{Name: t.DataTypeName(), Size: t.Size}
			} else if a.typeKey != "" {
				return c, nil
			}
			if _, err := c.filter(spec); err != nil {
				return nil, err
			}
			return c, nil
		}, "numcodecs."+a.id)
	}
}

// NumcodecsArray is the array→array codec "numcodecs.<ID>" for the
// numcodecs filters delta, fixedscaleoffset, quantize, astype and packbits.
type NumcodecsArray struct {
	ID     string
	Config Config
	// typeKey names the member holding the decoded type, encKey the one
	// holding the encoded type ("" for packbits, which has neither).
	typeKey, encKey string
}

// Name implements Codec.
func (c NumcodecsArray) Name() string { return "numcodecs." + c.ID }

// filter builds the bytes→bytes filter for chunks described by decoded.
func (c NumcodecsArray) filter(decoded ArraySpec) (BytesToBytes, error) {
	if decoded.DataType.Variable() {
		return nil, Unsupportedf("%s on variable-length data type %s", c.Name(), decoded.DataType.Name)
	}
	cfg := make(Config, len(c.Config)+1)
	for k, v := range c.Config {
		cfg[k] = v
	}
	if c.typeKey != "" {
		arrayType, err := ParseNumpyType(decoded.DataType.Name)
		if err != nil {
			return nil, Unsupportedf("%s on data type %s", c.Name(), decoded.DataType.Name)
		}
		if _, ok := cfg[c.typeKey]; !ok {
			cfg[c.typeKey], _ = json.Marshal(arrayType.String())
		}
		for _, key := range []string{c.typeKey, c.encKey} {
			t, err := numpyTypeConfig(c.Name(), cfg, key, typeName(cfg, c.typeKey))
			if err != nil {
				return nil, err
			}
			t.Big = false // the chunk is little-endian in memory
			if key == c.typeKey && (t.Kind != arrayType.Kind || t.Size != arrayType.Size) {
				return nil, fmt.Errorf("%s: %s %s does not match the array's data type %s", c.Name(), key, t, decoded.DataType.Name)
			}
			cfg[key], _ = json.Marshal(t.String())
		}
	} else if decoded.DataType.Name != "bool" {
		return nil, Unsupportedf("%s on data type %s (only bool)", c.Name(), decoded.DataType.Name)
	}
	f, err := New(c.ID, cfg)
	if err != nil {
		return nil, err
	}
	return f.(BytesToBytes), nil
}

// EncodedSpec implements ArrayToArray: the shape is kept, the data type is
// the filter's encoded type; packbits gives a one-dimensional uint8 array.
func (c NumcodecsArray) EncodedSpec(decoded ArraySpec) (ArraySpec, error) {
	f, err := c.filter(decoded)
	if err != nil {
		return ArraySpec{}, err
	}
	enc := decoded
	var t NumpyType
	switch f := f.(type) {
	case PackBits:
		enc.Shape = []int{f.EncodedSize(decoded.NumElements())}
		enc.DataType = DataType{Name: "uint8", Size: 1}
		enc.FillValue = []byte{0}
		return enc, nil
	case Delta:
		t = f.AsType
	case FixedScaleOffset:
		t = f.AsType
	case Quantize:
		t = f.AsType
	case AsType:
		t = f.EncodeType
	}
	name := t.DataTypeName()
	if name == "" {
		return ArraySpec{}, Unsupportedf("%s to %s", c.Name(), t)
	}
	enc.DataType = DataType{Name: name, Size: t.Size}
	enc.FillValue = nil
	if len(decoded.FillValue) == decoded.DataType.Size {
		if fill, err := f.Encode(decoded.FillValue); err == nil && len(fill) == t.Size {
			enc.FillValue = fill
		}
	}
	return enc, nil
}

// Encode implements ArrayToArray.
func (c NumcodecsArray) Encode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	f, err := c.filter(decoded)
	if err != nil {
		return nil, err
	}
	return f.Encode(chunk)
}

// Decode implements ArrayToArray.
func (c NumcodecsArray) Decode(chunk []byte, decoded ArraySpec) ([]byte, error) {
	f, err := c.filter(decoded)
	if err != nil {
		return nil, err
	}
	return f.Decode(chunk, decoded.ByteSize())
}
