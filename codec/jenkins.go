package codec

import (
	"encoding/binary"
	"fmt"
	"math/bits"
)

func init() {
	Register(newJenkinsLookup3, "jenkins_lookup3", "numcodecs.jenkins_lookup3")
}

// JenkinsLookup3 is numcodecs' JenkinsLookup3 codec: the data, then Bob
// Jenkins' lookup3 hash (hashlittle, as HDF5 computes it) of Prefix and
// the data with seed InitVal, 4 bytes little-endian.
type JenkinsLookup3 struct {
	InitVal uint32
	Prefix  []byte
}

func newJenkinsLookup3(cfg Config) (Codec, error) {
	var c JenkinsLookup3
	var initval int64
	if _, err := cfg.Decode("jenkins_lookup3", "initval", &initval); err != nil {
		return nil, err
	}
	if initval < 0 || initval > 0xffffffff {
		return nil, fmt.Errorf("jenkins_lookup3: initval %d is not a uint32", initval)
	}
	c.InitVal = uint32(initval)
	var prefix []int
	if _, err := cfg.Decode("jenkins_lookup3", "prefix", &prefix); err != nil {
		return nil, Unsupportedf("jenkins_lookup3 prefix that is not a list of bytes")
	}
	for _, b := range prefix {
		if b < 0 || b > 255 {
			return nil, fmt.Errorf("jenkins_lookup3: prefix byte %d", b)
		}
		c.Prefix = append(c.Prefix, byte(b))
	}
	return c, nil
}

// Name implements Codec.
func (JenkinsLookup3) Name() string { return "jenkins_lookup3" }

// EncodedSize implements BytesToBytes.
func (JenkinsLookup3) EncodedSize(n int) int { return n + 4 }

func (c JenkinsLookup3) sum(data []byte) uint32 {
	if len(c.Prefix) > 0 {
		data = append(append(make([]byte, 0, len(c.Prefix)+len(data)), c.Prefix...), data...)
	}
	return lookup3(data, c.InitVal)
}

// Encode implements BytesToBytes.
func (c JenkinsLookup3) Encode(data []byte) ([]byte, error) {
	out := make([]byte, len(data), len(data)+4)
	copy(out, data)
	return binary.LittleEndian.AppendUint32(out, c.sum(data)), nil
}

// Decode implements BytesToBytes. The result aliases data.
func (c JenkinsLookup3) Decode(data []byte, decodedSize int) ([]byte, error) {
	if len(data) < 4 {
		return nil, Corruptf("jenkins_lookup3", "%d bytes, too short for a checksum", len(data))
	}
	body := data[:len(data)-4]
	if err := checkSize("jenkins_lookup3", len(body), decodedSize); err != nil {
		return nil, err
	}
	if got, stored := c.sum(body), binary.LittleEndian.Uint32(data[len(body):]); got != stored {
		return nil, Corruptf("jenkins_lookup3", "checksum %08x, stored %08x", got, stored)
	}
	return body, nil
}

// lookup3 is Bob Jenkins' hashlittle over bytes read little-endian.
func lookup3(k []byte, initval uint32) uint32 {
	a := 0xdeadbeef + uint32(len(k)) + initval
	b, c := a, a
	for len(k) > 12 {
		a += binary.LittleEndian.Uint32(k)
		b += binary.LittleEndian.Uint32(k[4:])
		c += binary.LittleEndian.Uint32(k[8:])
		// mix
		a, c = mixStep(a, c, b, 4)
		b, a = mixStep(b, a, c, 6)
		c, b = mixStep(c, b, a, 8)
		a, c = mixStep(a, c, b, 16)
		b, a = mixStep(b, a, c, 19)
		c, b = mixStep(c, b, a, 4)
		k = k[12:]
	}
	if len(k) == 0 {
		return c
	}
	var tail [12]byte
	copy(tail[:], k)
	a += binary.LittleEndian.Uint32(tail[:])
	b += binary.LittleEndian.Uint32(tail[4:])
	c += binary.LittleEndian.Uint32(tail[8:])
	// final
	c = finalStep(c, b, 14)
	a = finalStep(a, c, 11)
	b = finalStep(b, a, 25)
	c = finalStep(c, b, 16)
	a = finalStep(a, c, 4)
	b = finalStep(b, a, 14)
	c = finalStep(c, b, 24)
	return c
}

// mixStep is one line of lookup3's mix: x -= y; x ^= rot(y, r); y += z.
func mixStep(x, y, z uint32, r int) (uint32, uint32) {
	x -= y
	x ^= bits.RotateLeft32(y, r)
	return x, y + z
}

// finalStep is one line of lookup3's final: x ^= y; x -= rot(y, r).
func finalStep(x, y uint32, r int) uint32 {
	return (x ^ y) - bits.RotateLeft32(y, r)
}
