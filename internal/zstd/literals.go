package zstd

import "encoding/binary"

// The literals section of a compressed block: raw, RLE or Huffman-coded
// in one or four streams (RFC 8878 §3.1.1.3.1).

// literals decodes the literals section at the start of b and returns the
// literals (in b itself when stored raw) and the section's length.
func (s *zstdState) literals(b []byte) ([]byte, int, error) {
	if len(b) == 0 {
		return nil, 0, errZstdFallback
	}
	ltype, sf := b[0]&3, b[0]>>2&3
	if ltype < 2 {
		var size, hdr int
		switch sf {
		case 0, 2:
			size, hdr = int(b[0]>>3), 1
		case 1:
			if len(b) < 2 {
				return nil, 0, errZstdFallback
			}
			size, hdr = int(b[0]>>4)+int(b[1])<<4, 2
		case 3:
			if len(b) < 3 {
				return nil, 0, errZstdFallback
			}
			size, hdr = int(b[0]>>4)+int(b[1])<<4+int(b[2])<<12, 3
		}
		if size > zstdMaxBlockSize {
			return nil, 0, errZstdFallback
		}
		if ltype == 0 {
			if size > len(b)-hdr {
				return nil, 0, errZstdFallback
			}
			return b[hdr : hdr+size], hdr + size, nil
		}
		if len(b) < hdr+1 {
			return nil, 0, errZstdFallback
		}
		lits := s.lits[:size]
		fill(lits, b[hdr])
		return lits, hdr + 1, nil
	}
	var regen, comp, hdr int
	streams := 4
	switch sf {
	case 0, 1:
		if len(b) < 3 {
			return nil, 0, errZstdFallback
		}
		v := int(b[0]) | int(b[1])<<8 | int(b[2])<<16
		regen, comp, hdr = v>>4&0x3FF, v>>14&0x3FF, 3
		if sf == 0 {
			streams = 1
		}
	case 2:
		if len(b) < 4 {
			return nil, 0, errZstdFallback
		}
		v := int(binary.LittleEndian.Uint32(b))
		regen, comp, hdr = v>>4&0x3FFF, v>>18&0x3FFF, 4
	case 3:
		if len(b) < 5 {
			return nil, 0, errZstdFallback
		}
		v := int(binary.LittleEndian.Uint32(b)) | int(b[4])<<32
		regen, comp, hdr = v>>4&0x3FFFF, v>>22&0x3FFFF, 5
	}
	if regen > zstdMaxBlockSize || comp > len(b)-hdr {
		return nil, 0, errZstdFallback
	}
	data := b[hdr : hdr+comp]
	if ltype == 2 {
		n, err := s.readHuffman(data)
		if err != nil {
			return nil, 0, err
		}
		data = data[n:]
	} else if !s.huffOK {
		return nil, 0, errZstdFallback
	}
	lits := s.lits[:regen]
	if streams == 1 {
		if !s.huffStream(lits, data) {
			return nil, 0, errZstdFallback
		}
		return lits, hdr + comp, nil
	}
	q := (regen + 3) / 4
	if len(data) < 6 || 3*q > regen {
		return nil, 0, errZstdFallback
	}
	s1, s2, s3 := int(binary.LittleEndian.Uint16(data)), int(binary.LittleEndian.Uint16(data[2:])), int(binary.LittleEndian.Uint16(data[4:]))
	data = data[6:]
	if s1+s2+s3 > len(data) {
		return nil, 0, errZstdFallback
	}
	if !s.huff4(lits, q, data[:s1], data[s1:s1+s2], data[s1+s2:s1+s2+s3], data[s1+s2+s3:]) {
		return nil, 0, errZstdFallback
	}
	return lits, hdr + comp, nil
}
