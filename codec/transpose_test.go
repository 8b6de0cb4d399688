package codec

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zarrfs/zarrfs/internal/peertest"
)

// naiveTranspose is the spec's definition, element by element:
// B[bpos] = A[apos] with bpos[i] = apos[order[i]].
func naiveTranspose(a []byte, shape, order []int, size int) []byte {
	n := len(a) / size
	bshape := make([]int, len(order))
	for i, d := range order {
		bshape[i] = shape[d]
	}
	out := make([]byte, len(a))
	apos := make([]int, len(shape))
	for ai := 0; ai < n; ai++ {
		rem := ai
		for d := len(shape) - 1; d >= 0; d-- {
			apos[d] = rem % shape[d]
			rem /= shape[d]
		}
		bi := 0
		for i, d := range order {
			bi = bi*bshape[i] + apos[d]
		}
		copy(out[bi*size:bi*size+size], a[ai*size:ai*size+size])
	}
	return out
}

var transposeCases = []struct {
	order string
	shape []int
	perm  []int // the permutation order means for this shape
}{
	{`[0]`, []int{5}, []int{0}},
	{`[1,0]`, []int{3, 4}, []int{1, 0}},
	{`[0,1]`, []int{3, 4}, []int{0, 1}},
	{`[2,0,1]`, []int{2, 3, 4}, []int{2, 0, 1}},
	{`[1,2,0]`, []int{2, 3, 4}, []int{1, 2, 0}},
	{`[3,1,0,2]`, []int{2, 1, 3, 2}, []int{3, 1, 0, 2}},
	{`[1,0]`, []int{0, 4}, []int{1, 0}},
	{`[]`, nil, []int{}},
	{`"F"`, []int{2, 3, 4}, []int{2, 1, 0}},
	{`"C"`, []int{2, 3, 4}, []int{0, 1, 2}},
}

func TestTranspose(t *testing.T) {
	for _, tc := range transposeCases {
		for _, size := range []int{1, 2, 8} {
			t.Run(fmt.Sprintf("%s/%v/%d", tc.order, tc.shape, size), func(t *testing.T) {
				c := newCodec(t, "transpose", `{"order":`+tc.order+`}`).(ArrayToArray)
				spec := ArraySpec{Shape: tc.shape, DataType: DataType{"x", size}}
				in := testData(spec.ByteSize(), uint64(size))
				enc, err := c.Encode(in, spec)
				if err != nil {
					t.Fatal(err)
				}
				equalBytes(t, "encode", enc, naiveTranspose(in, tc.shape, tc.perm, size))
				es, err := c.EncodedSpec(spec)
				if err != nil {
					t.Fatal(err)
				}
				for i, d := range tc.perm {
					if es.Shape[i] != tc.shape[d] {
						t.Errorf("EncodedSpec shape %v", es.Shape)
					}
				}
				dec, err := c.Decode(enc, spec)
				if err != nil {
					t.Fatal(err)
				}
				equalBytes(t, "decode", dec, in)
			})
		}
	}
}

func TestTransposeVlen(t *testing.T) {
	c := Transpose{Order: []int{1, 0}}
	spec := ArraySpec{Shape: []int{2, 3}, DataType: DataType{"string", 0}}
	elems := []string{"a", "bb", "", "dddd", "e", "ff"}
	want := []string{"a", "dddd", "bb", "e", "", "ff"}
	enc, err := c.Encode(vlenLayout(elems), spec)
	if err != nil {
		t.Fatal(err)
	}
	equalBytes(t, "encode", enc, vlenLayout(want))
	dec, err := c.Decode(enc, spec)
	if err != nil {
		t.Fatal(err)
	}
	equalBytes(t, "decode", dec, vlenLayout(elems))
	if _, err := c.Decode(enc[:len(enc)-1], spec); !errors.Is(err, ErrCorrupt) {
		t.Errorf("truncated vlen: %v, want ErrCorrupt", err)
	}
}

// vlenLayout returns the numcodecs vlen layout of elems.
func vlenLayout(elems []string) []byte { return vlenAppend(nil, elems) }

func TestTransposeErrors(t *testing.T) {
	for _, order := range []string{`[0,0]`, `[1,2]`, `[-1,0]`, `"X"`, `3`, `{}`} {
		if _, err := New("transpose", Config{"order": json.RawMessage(order)}); err == nil {
			t.Errorf("order %s accepted", order)
		}
	}
	if _, err := New("transpose", Config{}); err == nil {
		t.Error("no order accepted")
	}
	c := Transpose{Order: []int{1, 0}}
	if _, err := c.EncodedSpec(ArraySpec{Shape: []int{3}}); err == nil {
		t.Error("order of rank 2 on a rank-1 chunk accepted")
	}
	if _, err := c.Decode(make([]byte, 5), ArraySpec{Shape: []int{2, 3}, DataType: DataType{"uint8", 1}}); !errors.Is(err, ErrCorrupt) {
		t.Errorf("short chunk: %v, want ErrCorrupt", err)
	}
}

// TestTransposePeer compares with numpy.transpose.
func TestTransposePeer(t *testing.T) {
	dir := t.TempDir()
	var lines []string
	for i, tc := range transposeCases {
		if strings.HasPrefix(tc.order, `"`) {
			continue
		}
		spec := ArraySpec{Shape: tc.shape, DataType: DataType{"int32", 4}}
		in := testData(spec.ByteSize(), uint64(i))
		p := filepath.Join(dir, fmt.Sprint(i))
		if err := os.WriteFile(p, in, 0o644); err != nil {
			t.Fatal(err)
		}
		shape, _ := json.Marshal(append([]int{}, tc.shape...))
		lines = append(lines, fmt.Sprintf("%s %s %s", p, shape, tc.order))
	}
	list := filepath.Join(dir, "list")
	if err := os.WriteFile(list, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	peertest.Oracle(t, "codec/transpose_peer.py", list)
	for _, line := range lines {
		f := strings.Fields(line)
		var shape, order []int
		json.Unmarshal([]byte(f[1]), &shape)
		json.Unmarshal([]byte(f[2]), &order)
		in, _ := os.ReadFile(f[0])
		want, err := os.ReadFile(f[0] + ".t")
		if err != nil {
			t.Fatal(err)
		}
		spec := ArraySpec{Shape: shape, DataType: DataType{"int32", 4}}
		got, err := Transpose{Order: order}.Encode(in, spec)
		if err != nil {
			t.Fatal(err)
		}
		equalBytes(t, line, got, want)
	}
}

func FuzzTransposeDecode(f *testing.F) {
	f.Add([]byte{1, 2, 3, 4, 5, 6}, uint8(2), uint8(3), true)
	for _, b := range hostileSeeds(f, "raw-") {
		f.Add(b, uint8(64), uint8(128), false)
	}
	for _, b := range hostileSeeds(f, "vlen-") {
		f.Add(b, uint8(8), uint8(8), true)
	}
	f.Fuzz(func(t *testing.T, data []byte, a, b uint8, vlen bool) {
		spec := ArraySpec{Shape: []int{int(a), int(b)}, DataType: DataType{"uint8", 1}}
		if vlen {
			spec.DataType = DataType{"bytes", 0}
		}
		out, err := (Transpose{Order: []int{1, 0}}).Decode(data, spec)
		if err != nil {
			return
		}
		if !vlen && len(out) != spec.ByteSize() {
			t.Fatalf("Decode gave %d bytes, want %d", len(out), spec.ByteSize())
		}
		back, err := (Transpose{Order: []int{1, 0}}).Encode(out, spec)
		if err != nil || string(back) != string(data) {
			t.Fatalf("round trip failed: %v", err)
		}
	})
}
