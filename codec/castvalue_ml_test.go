package codec

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// TestPeerCastValueMLTypes runs NumPy's cases through scale_offset and
// cast_value built from their configurations.
func TestPeerCastValueMLTypes(t *testing.T) {
	peertest.NeedPythonModules(t, "import numpy", "python3-numpy")
	var cases []struct {
		Name, DType, Direction, In, Want string
		Codecs                           json.RawMessage
	}
	if err := json.Unmarshal(peertest.Oracle(t, "codec/cast_ml_numpy.py"), &cases); err != nil {
		t.Fatal(err)
	}
	if len(cases) < 150 {
		t.Fatalf("NumPy gave %d cases", len(cases))
	}
	for _, c := range cases {
		cs, err := ParseCodecList(c.Codecs)
		if err != nil || len(cs) != 1 {
			t.Fatalf("%s: %v", c.Name, err)
		}
		arr, ok := numTypeNamed(c.DType)
		if !ok {
			t.Fatalf("%s: %s", c.Name, c.DType)
		}
		in, _ := hex.DecodeString(c.In)
		aa := cs[0].(ArrayToArray)
		var got []byte
		if c.Direction == "encode" {
			spec := ArraySpec{Shape: []int{len(in) / arr.size}, DataType: DataType{Name: c.DType, Size: arr.size}}
			got, err = aa.Encode(in, spec)
		} else {
			stored := arr
			if cv, ok := cs[0].(CastValue); ok {
				stored, _ = numTypeNamed(cv.DataType)
			}
			spec := ArraySpec{Shape: []int{len(in) / stored.size}, DataType: DataType{Name: c.DType, Size: arr.size}}
			got, err = aa.Decode(in, spec)
		}
		if c.Want == "error" {
			if !errors.Is(err, ErrCorrupt) {
				t.Errorf("%s: %x, %v; want a corrupt-chunk error", c.Name, got, err)
			}
			continue
		}
		want, _ := hex.DecodeString(c.Want)
		same := string(got) == string(want)
		if c.Direction == "decode" { // any NaN equals any
			same = len(got) == len(want) && sameFloats(got, want, DataType{Name: c.DType})
		}
		if err != nil || !same {
			t.Errorf("%s: %v\n got %s\nwant %s", c.Name, err, firstDiff(got, want), c.Want)
		}
	}
}

// firstDiff shows got from its first difference with want.
func firstDiff(got, want []byte) string {
	i := 0
	for i < len(got) && i < len(want) && got[i] == want[i] {
		i++
	}
	return fmt.Sprintf("%x… (first difference at byte %d)", got[i:min(len(got), i+16)], i)
}

// TestCastValueMLFill: the fill value goes through the codecs as the
// elements do ("Implementations MUST transform the fill value as it
// propagates through the codec chain"): float16 1.5 by scale_offset
// (offset 1, scale 2) is 1.0 (0x3c00), then by cast_value to bfloat16
// 0x3f80; a float32 NaN cast to float8_e4m3fnuz is its NaN, 0x80.
func TestCastValueMLFill(t *testing.T) {
	for _, c := range []struct {
		codecs string
		dt     DataType
		fill   []byte
		want   []byte
	}{
		{`[{"name": "scale_offset", "configuration": {"offset": 1, "scale": 2}}, {"name": "cast_value", "configuration": {"data_type": "bfloat16"}}]`,
			DataType{Name: "float16", Size: 2}, []byte{0x00, 0x3e}, []byte{0x80, 0x3f}},
		{`[{"name": "cast_value", "configuration": {"data_type": "float8_e4m3fnuz"}}]`,
			DataType{Name: "float32", Size: 4}, []byte{0x00, 0x00, 0xc0, 0x7f}, []byte{0x80}},
	} {
		cs, err := ParseCodecList(json.RawMessage(c.codecs))
		if err != nil {
			t.Fatal(err)
		}
		spec := ArraySpec{Shape: []int{3}, DataType: c.dt, FillValue: c.fill}
		for _, cd := range cs {
			if spec, err = cd.(ArrayToArray).EncodedSpec(spec); err != nil {
				t.Fatalf("%s: %v", c.codecs, err)
			}
		}
		if string(spec.FillValue) != string(c.want) {
			t.Errorf("%s: encoded fill % x, want % x", c.codecs, spec.FillValue, c.want)
		}
	}
}
