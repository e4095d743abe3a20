package record

// Kafka varints are protobuf-style zigzag varints: at most 5 bytes for a
// 32-bit varint and 10 for a 64-bit varlong. The readers return the value and
// the index after it, or -1 when the bytes end early, the encoding is too long
// or the value overflows its width.

// readVarint reads a zigzag varint starting at b[i].
func readVarint(b []byte, i int) (int32, int) {
	if v, j := varintFast(b, i); j >= 0 {
		return v, j
	}
	return readVarintSlow(b, i)
}

// readVarintSlow handles every case; it is kept out of line so that its
// callers stay small.
//
//go:noinline
func readVarintSlow(b []byte, i int) (int32, int) {
	var u uint32
	for shift := uint(0); shift < 35; shift += 7 {
		if i < 0 || i >= len(b) {
			return 0, -1
		}
		c := b[i]
		i++
		if shift == 28 && c > 0x0f {
			return 0, -1
		}
		u |= uint32(c&0x7f) << shift
		if c < 0x80 {
			return int32(u>>1) ^ -int32(u&1), i
		}
	}
	return 0, -1
}

// readVarlong reads a zigzag varlong starting at b[i].
func readVarlong(b []byte, i int) (int64, int) {
	if v, j := varlongFast(b, i); j >= 0 {
		return v, j
	}
	return readVarlongSlow(b, i)
}

// readVarlongSlow handles every case; it is kept out of line so that its
// callers stay small.
//
//go:noinline
func readVarlongSlow(b []byte, i int) (int64, int) {
	var u uint64
	for shift := uint(0); shift < 70; shift += 7 {
		if i < 0 || i >= len(b) {
			return 0, -1
		}
		c := b[i]
		i++
		if shift == 63 && c > 0x01 {
			return 0, -1
		}
		u |= uint64(c&0x7f) << shift
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), i
		}
	}
	return 0, -1
}

// appendVarint appends v as a zigzag varint.
func appendVarint(b []byte, v int32) []byte {
	return appendUvarint(b, uint64(uint32((v<<1)^(v>>31))))
}

// appendVarlong appends v as a zigzag varlong.
func appendVarlong(b []byte, v int64) []byte {
	return appendUvarint(b, uint64((v<<1)^(v>>63)))
}

func appendUvarint(b []byte, u uint64) []byte {
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

// varintLen is the encoded size of v as a zigzag varint.
func varintLen(v int32) int {
	u := uint32((v << 1) ^ (v >> 31))
	n := 1
	for u >= 0x80 {
		u >>= 7
		n++
	}
	return n
}

// varintFast decodes a zigzag varint of one or two bytes at b[i] without a
// call, so that it inlines into the validation loop. It returns index -2
// when the varint is longer, cut short or i is out of range; the caller then
// falls back to readVarintSlow, which also reports errors.
func varintFast(b []byte, i int) (int32, int) {
	if uint(i) >= uint(len(b)) {
		return 0, -2
	}
	u, n := uint32(b[i]), 1
	if u >= 0x80 {
		if uint(i)+1 >= uint(len(b)) || b[i+1] >= 0x80 {
			return 0, -2
		}
		u, n = u&0x7f|uint32(b[i+1])<<7, 2
	}
	return int32(u>>1) ^ -int32(u&1), i + n
}

// varlongFast is varintFast for varlongs.
func varlongFast(b []byte, i int) (int64, int) {
	if uint(i) >= uint(len(b)) {
		return 0, -2
	}
	u, n := uint64(b[i]), 1
	if u >= 0x80 {
		if uint(i)+1 >= uint(len(b)) || b[i+1] >= 0x80 {
			return 0, -2
		}
		u, n = u&0x7f|uint64(b[i+1])<<7, 2
	}
	return int64(u>>1) ^ -int64(u&1), i + n
}
