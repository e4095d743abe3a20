package record

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"slices"
	"sync"

	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/snappy"
	"github.com/klauspost/compress/zstd"
	"github.com/pierrec/lz4/v4"
)

// maxZstdWindow is the largest zstd window a batch may declare. The decoder
// allocates the window up front, so without a cap a 20-byte frame could claim
// hundreds of MiB. 16 MiB covers every non-"ultra" zstd level.
const maxZstdWindow = 16 << 20

// maxPooledBuffer is the largest decompression buffer kept for reuse; bigger
// ones are left to the garbage collector so a rare huge batch does not pin
// memory.
const maxPooledBuffer = 8 << 20

// xerialMagic starts snappy data in the framing of the Java snappy library,
// which the Java client uses: the magic, two int32 versions, then chunks of
// (int32 length, raw snappy block).
var xerialMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

const xerialHeaderSize = 16

// snappyFramedMagic starts the official snappy stream ("framing") format.
var snappyFramedMagic = []byte{0xff, 0x06, 0x00, 0x00, 's', 'N', 'a', 'P', 'p', 'Y'}

var bufferPool = sync.Pool{New: func() any {
	b := make([]byte, 0, 64<<10)
	return &b
}}

func getBuffer() *[]byte { return bufferPool.Get().(*[]byte) }

func putBuffer(b *[]byte) {
	if cap(*b) <= maxPooledBuffer {
		*b = (*b)[:0]
		bufferPool.Put(b)
	}
}

// Pooled stream decoders, each with the bytes.Reader that feeds it so that a
// decode allocates nothing once the pools are warm.
type gzipDecoder struct {
	src bytes.Reader
	r   gzip.Reader
}

type lz4Decoder struct {
	src bytes.Reader
	r   *lz4.Reader
}

type zstdDecoder struct {
	src bytes.Reader
	d   *zstd.Decoder
}

var (
	gzipDecoders = sync.Pool{New: func() any { return new(gzipDecoder) }}
	lz4Decoders  = sync.Pool{New: func() any { return &lz4Decoder{r: lz4.NewReader(nil)} }}
	zstdDecoders = sync.Pool{New: func() any {
		// Concurrency 1 decodes synchronously, without goroutines. When
		// streaming, both limits below bound only the window; readCapped
		// bounds the output.
		d, err := zstd.NewReader(nil,
			zstd.WithDecoderConcurrency(1),
			zstd.WithDecoderMaxWindow(maxZstdWindow),
			zstd.WithDecoderMaxMemory(maxZstdWindow))
		if err != nil {
			panic(fmt.Sprintf("record: zstd decoder options: %v", err))
		}
		return &zstdDecoder{d: d}
	}}
)

// Compression writers. zstd uses one encoder shared by all goroutines
// (EncodeAll is safe for concurrent use); the others are pooled.
var (
	gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}
	lz4Writers  = sync.Pool{New: func() any {
		w := lz4.NewWriter(nil)
		// Kafka's Java client writes 64 KiB blocks; readers then need only
		// small block buffers.
		if err := w.Apply(lz4.BlockSizeOption(lz4.Block64Kb)); err != nil {
			panic(fmt.Sprintf("record: lz4 writer options: %v", err))
		}
		return w
	}}
	zstdEncoder = sync.OnceValue(func() *zstd.Encoder {
		e, err := zstd.NewWriter(nil,
			zstd.WithEncoderConcurrency(runtime.GOMAXPROCS(0)),
			zstd.WithEncoderLevel(zstd.SpeedDefault))
		if err != nil {
			panic(fmt.Sprintf("record: zstd encoder options: %v", err))
		}
		return e
	})
)

// appendWriter is an io.Writer appending to a slice.
type appendWriter struct{ b []byte }

func (w *appendWriter) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

// Compress appends src compressed with c to dst and returns the extended
// slice: gzip, raw snappy blocks (what franz-go and librdkafka send), the lz4
// frame format with 64 KiB blocks, or a zstd frame. CompressionNone appends
// src as it is. An unknown codec fails with ErrUnsupportedCompression.
// Safe for concurrent use.
func Compress(c Compression, dst, src []byte) ([]byte, error) {
	switch c {
	case CompressionNone:
		return append(dst, src...), nil
	case CompressionGzip:
		w := gzipWriters.Get().(*gzip.Writer)
		defer gzipWriters.Put(w)
		out := appendWriter{b: dst}
		w.Reset(&out)
		if _, err := w.Write(src); err != nil {
			return dst, fmt.Errorf("gzip compress: %w", err)
		}
		if err := w.Close(); err != nil {
			return dst, fmt.Errorf("gzip compress: %w", err)
		}
		w.Reset(nil)
		return out.b, nil
	case CompressionSnappy:
		n := snappy.MaxEncodedLen(len(src))
		if n < 0 {
			return dst, fmt.Errorf("snappy compress: %d bytes is too large for one block", len(src))
		}
		dst = slices.Grow(dst, n)
		enc := snappy.Encode(dst[len(dst):len(dst)+n], src)
		return dst[:len(dst)+len(enc)], nil
	case CompressionLZ4:
		w := lz4Writers.Get().(*lz4.Writer)
		defer lz4Writers.Put(w)
		out := appendWriter{b: dst}
		w.Reset(&out)
		if _, err := w.Write(src); err != nil {
			return dst, fmt.Errorf("lz4 compress: %w", err)
		}
		if err := w.Close(); err != nil {
			return dst, fmt.Errorf("lz4 compress: %w", err)
		}
		w.Reset(nil)
		return out.b, nil
	case CompressionZstd:
		return zstdEncoder().EncodeAll(src, dst), nil
	}
	return dst, fmt.Errorf("%w: codec id %d", ErrUnsupportedCompression, int8(c))
}

// Decompress returns src decompressed with c in a new slice. It stops with
// ErrTooLarge as soon as the output would exceed limit bytes, so a
// decompression bomb costs at most about limit bytes of memory. A corrupt
// stream fails with ErrCorruptMessage, an unknown codec with
// ErrUnsupportedCompression. Snappy input may be a raw block, xerial-framed
// (the Java client) or the snappy stream format. Safe for concurrent use.
func Decompress(c Compression, src []byte, limit int) ([]byte, error) {
	out, err := decompressAppend(c, nil, src, limit)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// decompressAppend appends the decompressed src to dst, producing at most
// limit bytes. On error the returned slice is dst with unspecified extra
// contents (its capacity may be reused).
func decompressAppend(c Compression, dst, src []byte, limit int) ([]byte, error) {
	// Keep limit+1 and the growth arithmetic in readCapped from overflowing.
	limit = min(max(limit, 0), 1<<40)
	switch c {
	case CompressionNone:
		if len(src) > limit {
			return dst, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(src), limit)
		}
		return append(dst, src...), nil
	case CompressionGzip:
		d := gzipDecoders.Get().(*gzipDecoder)
		defer gzipDecoders.Put(d)
		defer d.src.Reset(nil)
		d.src.Reset(src)
		if err := d.r.Reset(&d.src); err != nil {
			return dst, fmt.Errorf("%w: gzip: %w", ErrCorruptMessage, err)
		}
		return readCapped(&d.r, dst, limit, len(src), c)
	case CompressionSnappy:
		return decodeSnappy(dst, src, limit)
	case CompressionLZ4:
		d := lz4Decoders.Get().(*lz4Decoder)
		defer lz4Decoders.Put(d)
		defer d.r.Reset(nil)
		d.src.Reset(src)
		d.r.Reset(&d.src)
		return readCapped(d.r, dst, limit, len(src), c)
	case CompressionZstd:
		d := zstdDecoders.Get().(*zstdDecoder)
		defer zstdDecoders.Put(d)
		defer d.d.Reset(nil)
		d.src.Reset(src)
		if err := d.d.Reset(&d.src); err != nil {
			return dst, fmt.Errorf("%w: zstd: %w", ErrCorruptMessage, err)
		}
		return readCapped(d.d, dst, limit, len(src), c)
	}
	return dst, fmt.Errorf("%w: codec id %d", ErrUnsupportedCompression, int8(c))
}

// readCapped appends everything r produces to dst, failing with ErrTooLarge
// once more than limit bytes came out. It grows dst geometrically from a
// guess based on the compressed size, never past about limit.
func readCapped(r io.Reader, dst []byte, limit, compressed int, c Compression) ([]byte, error) {
	start := len(dst)
	if want := min(max(4*compressed, 4<<10), limit+1); cap(dst)-start < want {
		dst = slices.Grow(dst, want)
	}
	for {
		if len(dst) == cap(dst) {
			grow := min(max(cap(dst)-start, 4<<10), start+limit+1-len(dst))
			dst = slices.Grow(dst, grow)
		}
		n, err := r.Read(dst[len(dst):cap(dst)])
		dst = dst[:len(dst)+n]
		if len(dst)-start > limit {
			return dst, fmt.Errorf("%w: %s records exceed %d bytes", ErrTooLarge, c, limit)
		}
		if err == io.EOF {
			return dst, nil
		}
		if err != nil {
			return dst, fmt.Errorf("%w: %s: %w", ErrCorruptMessage, c, err)
		}
	}
}

// decodeSnappy handles the three snappy shapes Kafka clients send: a raw
// block (franz-go, librdkafka), xerial framing (Java), and the snappy stream
// format.
func decodeSnappy(dst, src []byte, limit int) ([]byte, error) {
	start := len(dst)
	switch {
	case bytes.HasPrefix(src, xerialMagic):
		if len(src) < xerialHeaderSize {
			return dst, fmt.Errorf("%w: snappy: xerial header cut short", ErrCorruptMessage)
		}
		for pos := xerialHeaderSize; pos < len(src); {
			if len(src)-pos < 4 {
				return dst, fmt.Errorf("%w: snappy: xerial chunk length cut short", ErrCorruptMessage)
			}
			n := binary.BigEndian.Uint32(src[pos:])
			pos += 4
			if uint64(n) > uint64(len(src)-pos) {
				return dst, fmt.Errorf("%w: snappy: xerial chunk of %d bytes exceeds remaining %d", ErrCorruptMessage, n, len(src)-pos)
			}
			var err error
			if dst, err = appendSnappyBlock(dst, src[pos:pos+int(n)], limit-(len(dst)-start)); err != nil {
				return dst, err
			}
			pos += int(n)
		}
		return dst, nil
	case bytes.HasPrefix(src, snappyFramedMagic):
		return readCapped(snappy.NewReader(bytes.NewReader(src)), dst, limit, len(src), CompressionSnappy)
	}
	return appendSnappyBlock(dst, src, limit)
}

func appendSnappyBlock(dst, block []byte, limit int) ([]byte, error) {
	n, err := snappy.DecodedLen(block)
	if err != nil {
		return dst, fmt.Errorf("%w: snappy: %w", ErrCorruptMessage, err)
	}
	if n > limit {
		return dst, fmt.Errorf("%w: snappy records exceed %d bytes", ErrTooLarge, limit)
	}
	dst = slices.Grow(dst, n)
	out, err := snappy.Decode(dst[len(dst):len(dst)+n], block)
	if err != nil {
		return dst, fmt.Errorf("%w: snappy: %w", ErrCorruptMessage, err)
	}
	if len(out) != n {
		return dst, fmt.Errorf("%w: snappy: block decoded to %d bytes, announced %d", ErrCorruptMessage, len(out), n)
	}
	return dst[:len(dst)+n], nil
}
