package codec

import (
	"encoding/binary"
	"testing"
)

// TestFletcher32Known checks the value numcodecs' own test expects: ten
// little-endian int64 values followed by their checksum fd258664.
func TestFletcher32Known(t *testing.T) {
	var data []byte
	for _, v := range []int64{1911, -2427, 1897, -2412, 2440, 873, -621, -829, 551, -2118} {
		data = binary.LittleEndian.AppendUint64(data, uint64(v))
	}
	enc, err := Fletcher32{}.Encode(data)
	if err != nil {
		t.Fatal(err)
	}
	if got := enc[len(data):]; string(got) != "\xfd\x25\x86\x64" {
		t.Errorf("checksum %x, want fd258664", got)
	}
	// Odd lengths: the last byte is the high byte of a word.
	if fletcher32([]byte{1, 2, 3}) != fletcher32([]byte{1, 2, 3, 0}) {
		t.Error("odd length differs from zero padding")
	}
	if fletcher32(nil) != 0 {
		t.Error("empty data has a non-zero checksum")
	}
}

// TestChecksumLocation: numcodecs' location option puts the checksum
// before or after the data.
func TestChecksumLocation(t *testing.T) {
	data := []byte("hello, world")
	for _, tc := range []struct {
		config  string
		atStart bool
	}{
		{`{"id":"crc32"}`, true}, {`{"id":"crc32","location":"end"}`, false},
		{`{"id":"adler32","location":"start"}`, true}, {`{"id":"crc32c"}`, false},
		{`{"id":"crc32c","location":"start"}`, true},
	} {
		enc, err := mustNew(t, tc.config).(BytesToBytes).Encode(data)
		if err != nil {
			t.Fatal(err)
		}
		body := enc[:len(data)]
		if tc.atStart {
			body = enc[4:]
		}
		if string(body) != string(data) {
			t.Errorf("%s: encoded % x", tc.config, enc)
		}
	}
	if _, err := New("crc32", Config{"location": []byte(`"middle"`)}); err == nil {
		t.Error("location middle accepted")
	}
}

// TestLookup3 checks the values of lookup3.c's own self-test (driver5).
func TestLookup3(t *testing.T) {
	for _, tc := range []struct {
		s    string
		init uint32
		want uint32
	}{
		{"", 0, 0xdeadbeef},
		{"", 0xdeadbeef, 0xbd5b7dde},
		{"Four score and seven years ago", 0, 0x17770551},
		{"Four score and seven years ago", 1, 0xcd628161},
	} {
		if got := lookup3([]byte(tc.s), tc.init); got != tc.want {
			t.Errorf("lookup3(%q, %#x) = %#08x, want %#08x", tc.s, tc.init, got, tc.want)
		}
	}
	c := mustNew(t, `{"id":"jenkins_lookup3","initval":1,"prefix":[70,111,117,114]}`).(BytesToBytes)
	enc, err := c.Encode([]byte(" score and seven years ago"))
	if err != nil {
		t.Fatal(err)
	}
	if got := binary.LittleEndian.Uint32(enc[len(enc)-4:]); got != 0xcd628161 {
		t.Errorf("with prefix: %#08x", got)
	}
	if out, err := c.Decode(enc, 26); err != nil || string(out) != " score and seven years ago" {
		t.Errorf("Decode = %q, %v", out, err)
	}
}

func FuzzJenkinsLookup3Decode(f *testing.F) { fuzzBytesToBytes(f, JenkinsLookup3{InitVal: 7}) }

// newChecksum32 (for tests) returns the checksum codec named algorithm with the
// checksum at its default place.
func newChecksum32(algorithm string) Checksum32 {
	return Checksum32{Algorithm: algorithm, AtStart: algorithm != "crc32c"}
}
