package codec

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// packbitsNumPy computes the v3 packbits encoding of test arrays with
// NumPy, from the extension's text (zarr-extensions codecs/packbits):
// "element i corresponds to bits [i * k, (i+1) * k) within the sequence",
// "encoded byte i corresponds to bits [i * 8, (i+1) * 8)", bits taken from
// the least significant ("np.packbits(bitorder='little')"), padding
// encoded in a first or last byte; and the decoded values: "the b encoded
// bits are first shifted to first_bit", then "sign-extended (for signed
// integer data types), or zero-extended". No implementation of the codec
// is installed here (zarr-python 2.13 and numcodecs 0.11 predate it), so
// NumPy's bit operations are the oracle. One JSON line per case.
const packbitsNumPy = `
import json, numpy as np
rng = np.random.default_rng(3)
def case(name, dt, data, cfg, ncomp=1):
    data = np.asarray(data, dtype=dt)
    nbits = 8 * data.dtype.itemsize // ncomp if data.dtype != np.bool_ else 1
    first = cfg.get("first_bit") or 0
    last = cfg.get("last_bit")
    last = nbits - 1 if last is None else last
    b = last - first + 1
    ut = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[max(nbits // 8, 1)]
    comps = data.view(ut) if data.dtype != np.bool_ else data.astype(np.uint8)
    comps = comps.reshape(-1).astype(np.uint64)
    field = (comps >> np.uint64(first)) & np.uint64((1 << b) - 1)
    bits = ((field[:, None] >> np.arange(b, dtype=np.uint64)) & np.uint64(1)).astype(np.uint8).reshape(-1)
    pad = (8 - len(bits) % 8) % 8
    enc = np.packbits(bits, bitorder="little").tobytes()
    pe = cfg.get("padding_encoding", "none")
    if pe == "first_byte": enc = bytes([pad]) + enc
    if pe == "last_byte": enc = enc + bytes([pad])
    dec = field << np.uint64(first)
    if dt.startswith("<i") or dt == "|i1":
        sign = (field >> np.uint64(b - 1)) & np.uint64(1)
        dec = np.where(sign == 1, dec | (np.uint64((1 << 64) - 1) << np.uint64(first + b)), dec)
    dec = (dec & np.uint64((1 << nbits) - 1)).astype(ut) if nbits >= 8 else dec.astype(np.uint8)
    print(json.dumps({"name": name, "dtype": dt, "n": int(data.size), "config": cfg,
                      "encoded": enc.hex(), "decoded": dec.tobytes().hex()}))
case("bool first_byte", "|b1", rng.integers(0, 2, 13).astype(bool), {"padding_encoding": "first_byte"})
case("bool last_byte", "|b1", rng.integers(0, 2, 16).astype(bool), {"padding_encoding": "last_byte"})
case("int16 bits 2-9", "<i2", rng.integers(-30000, 30000, 11), {"first_bit": 2, "last_bit": 9})
case("int32 bits 0-4", "<i4", rng.integers(-16, 16, 9), {"last_bit": 4, "padding_encoding": "first_byte"})
case("uint8 bits 0-4", "|u1", rng.integers(0, 256, 7), {"last_bit": 4, "padding_encoding": "last_byte"})
case("uint64 bits 3-62", "<u8", rng.integers(0, 2**63, 5, dtype=np.uint64), {"first_bit": 3, "last_bit": 62})
case("float32 top 16 bits", "<f4", rng.standard_normal(6), {"first_bit": 16})
case("complex64 bits 20-31", "<c8", rng.standard_normal(4) + 1j * rng.standard_normal(4), {"first_bit": 20}, ncomp=2)
case("float64 whole", "<f8", rng.standard_normal(5), {})
`

// TestPeerPackBitsV3 decodes the NumPy-computed encodings with the v3
// packbits codec as a v3 chain names it, and encodes the decoded values
// back to the same bytes.
func TestPeerPackBitsV3(t *testing.T) {
	peertest.NeedPython(t)
	out := peertest.RunPython(t, packbitsNumPy)
	names := map[string]string{"|b1": "bool", "<i2": "int16", "<i4": "int32", "|u1": "uint8", "<u8": "uint64",
		"<f4": "float32", "<c8": "complex64", "<f8": "float64"}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	cases := 0
	for sc.Scan() {
		var c struct {
			Name, DType, Encoded, Decoded string
			N                             int
			Config                        json.RawMessage
		}
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		cases++
		enc, _ := hex.DecodeString(c.Encoded)
		dec, _ := hex.DecodeString(c.Decoded)
		cs, err := ParseCodecList(json.RawMessage(`[{"name": "packbits", "configuration": ` + string(c.Config) + `}]`))
		if err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		pb, ok := cs[0].(PackBitsV3)
		if !ok {
			t.Fatalf("%s: packbits in a v3 chain is %T, want PackBitsV3", c.Name, cs[0])
		}
		spec := ArraySpec{Shape: []int{c.N}, DataType: DataType{Name: names[c.DType], Size: len(dec) / c.N}}
		if got := pb.EncodedSize(spec); got != len(enc) {
			t.Errorf("%s: EncodedSize %d, want %d", c.Name, got, len(enc))
		}
		got, err := pb.Decode(enc, spec)
		if err != nil || !bytes.Equal(got, dec) {
			t.Errorf("%s: Decode = %x, %v\nwant %x", c.Name, got, err, dec)
		}
		back, err := pb.Encode(dec, spec)
		if err != nil || !bytes.Equal(back, enc) {
			t.Errorf("%s: Encode = %x, %v\nwant %x", c.Name, back, err, enc)
		}
	}
	if cases != 9 {
		t.Fatalf("%d cases from NumPy, want 9", cases)
	}
}

// TestPackBitsV3Bad: configurations and chunks the codec refuses.
func TestPackBitsV3Bad(t *testing.T) {
	for _, cfg := range []string{
		`{"padding_encoding": "start"}`, `{"first_bit": -1}`, `{"first_bit": 5, "last_bit": 4}`,
		`{"last_bit": "3"}`, `{"bits": 3}`,
	} {
		if _, err := ParseCodecList(json.RawMessage(`[{"name": "packbits", "configuration": ` + cfg + `}]`)); err == nil {
			t.Errorf("%s: no error", cfg)
		}
	}
	pb := PackBitsV3{Padding: "first_byte", LastBit: -1}
	b13 := ArraySpec{Shape: []int{13}, DataType: DataType{Name: "bool", Size: 1}}
	for _, data := range [][]byte{nil, {3, 0}, {3, 0, 0, 0}, {4, 0, 0}} {
		if _, err := pb.Decode(data, b13); !errors.Is(err, ErrCorrupt) {
			t.Errorf("Decode(% x): %v, want ErrCorrupt", data, err)
		}
	}
	if _, err := (PackBitsV3{LastBit: 8}).Decode([]byte{0}, ArraySpec{Shape: []int{1}, DataType: DataType{Name: "uint8", Size: 1}}); err == nil {
		t.Errorf("last_bit 8 of uint8: no error")
	}
	if _, err := (PackBitsV3{LastBit: -1}).Decode([]byte{0}, ArraySpec{Shape: []int{1}, DataType: DataType{Name: "r8", Size: 1}}); !errors.Is(err, ErrUnsupported) {
		t.Errorf("r8: %v, want ErrUnsupported", err)
	}
}

// FuzzPackBitsV3 decodes arbitrary bytes under arbitrary configurations:
// an error or exactly the decoded size, never a panic.
func FuzzPackBitsV3(f *testing.F) {
	f.Add([]byte{3, 0xff, 0x1f}, uint8(0), uint8(0), uint8(255), uint8(0), uint8(13))
	f.Add([]byte{0xff, 0xff, 0xff}, uint8(1), uint8(2), uint8(9), uint8(2), uint8(2))
	f.Add([]byte{}, uint8(2), uint8(0), uint8(255), uint8(5), uint8(0))
	types := []DataType{{"bool", 1}, {"int16", 2}, {"uint8", 1}, {"complex64", 8}, {"int64", 8}, {"int4", 1}, {"float32", 4}}
	f.Fuzz(func(t *testing.T, data []byte, pad, first, last, typ, n uint8) {
		pb := PackBitsV3{Padding: []string{"none", "first_byte", "last_byte"}[int(pad)%3], FirstBit: int(first % 70), LastBit: int(last)}
		if last == 255 {
			pb.LastBit = -1
		}
		spec := ArraySpec{Shape: []int{int(n)}, DataType: types[int(typ)%len(types)]}
		out, err := pb.Decode(data, spec)
		if err == nil && len(out) != spec.ByteSize() {
			t.Fatalf("decoded %d bytes, want %d", len(out), spec.ByteSize())
		}
	})
}
