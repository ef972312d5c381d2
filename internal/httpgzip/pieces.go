package httpgzip

import (
	"encoding/binary"
	"hash/crc32"
	"io"
	"sync"

	"github.com/klauspost/compress/flate"
)

// Piece is a part of a body deflated on its own and flushed to a byte
// boundary, so that pieces deflated apart, written one after the other,
// make one deflate stream (as parallel gzip tools build theirs). A large
// answer made of parts that change apart (the client API's flags) is
// compressed once per part: a change recompresses the parts it touched.
type Piece struct {
	// Deflated is the compressed part; the stream goes on after it,
	// unless the piece is the last one.
	Deflated []byte
	// CRC is the CRC-32 (IEEE) of the uncompressed part; Size its length.
	CRC  uint32
	Size int
}

// flateWriters recycles best-compression deflaters (their state is
// hundreds of kilobytes).
var flateWriters = sync.Pool{New: func() any {
	w, _ := flate.NewWriter(nil, flate.BestCompression)
	return w
}}

// byteSink is the writer a deflater appends to.
type byteSink struct{ out []byte }

func (s *byteSink) Write(p []byte) (int, error) {
	s.out = append(s.out, p...)
	return len(p), nil
}

// Deflate compresses the concatenation of parts at the best compression
// into one piece; last ends the deflate stream (the body's final piece).
func Deflate(last bool, parts ...[]byte) Piece {
	fw := flateWriters.Get().(*flate.Writer)
	sink := &byteSink{}
	fw.Reset(sink)
	var p Piece
	for _, part := range parts {
		_, _ = fw.Write(part) // writing to memory cannot fail
		p.CRC = crc32.Update(p.CRC, crc32.IEEETable, part)
		p.Size += len(part)
	}
	if last {
		_ = fw.Close()
	} else {
		_ = fw.Flush()
	}
	flateWriters.Put(fw)
	p.Deflated = sink.out
	return p
}

// gzipHeader is a gzip member header without name, time or extra fields.
var gzipHeader = []byte{0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 0xff}

// GzipLen is the length of the gzip stream WriteGzip writes for pieces.
func GzipLen(pieces []Piece) int {
	n := len(gzipHeader) + 8
	for _, p := range pieces {
		n += len(p.Deflated)
	}
	return n
}

// WriteGzip writes the pieces as one gzip stream: the header, the
// pieces in order (the last one made with last set) and the trailer with
// the CRC and length of the whole uncompressed body.
func WriteGzip(w io.Writer, pieces []Piece) error {
	if _, err := w.Write(gzipHeader); err != nil {
		return err
	}
	var crc uint32
	size := 0
	for _, p := range pieces {
		if _, err := w.Write(p.Deflated); err != nil {
			return err
		}
		crc = crc32Combine(crc, p.CRC, p.Size)
		size += p.Size
	}
	var trailer [8]byte
	binary.LittleEndian.PutUint32(trailer[:4], crc)
	binary.LittleEndian.PutUint32(trailer[4:], uint32(size))
	_, err := w.Write(trailer[:])
	return err
}

// crc32Combine returns the CRC-32 (IEEE) of A followed by B from the CRC
// of A, the CRC of B and B's length: the CRC is linear over GF(2), so
// appending len2 zero bytes to A is a linear map of its CRC, applied here
// by repeated squaring of the one-zero-bit operator.
func crc32Combine(crc1, crc2 uint32, len2 int) uint32 {
	if len2 <= 0 {
		return crc1
	}
	var even, odd [32]uint32 // operators for 2^k zero bits
	odd[0] = 0xedb88320      // the reflected IEEE polynomial: one zero bit
	row := uint32(1)
	for i := 1; i < 32; i++ {
		odd[i] = row
		row <<= 1
	}
	gf2MatrixSquare(even[:], odd[:]) // two zero bits
	gf2MatrixSquare(odd[:], even[:]) // four zero bits
	for n := uint64(len2); n != 0; {
		gf2MatrixSquare(even[:], odd[:]) // the first pass: one zero byte
		if n&1 != 0 {
			crc1 = gf2MatrixTimes(even[:], crc1)
		}
		if n >>= 1; n == 0 {
			break
		}
		gf2MatrixSquare(odd[:], even[:])
		if n&1 != 0 {
			crc1 = gf2MatrixTimes(odd[:], crc1)
		}
		n >>= 1
	}
	return crc1 ^ crc2
}

// gf2MatrixTimes multiplies the 32×32 bit matrix mat (one column per
// word) by the vector vec.
func gf2MatrixTimes(mat []uint32, vec uint32) uint32 {
	var sum uint32
	for i := 0; vec != 0; i, vec = i+1, vec>>1 {
		if vec&1 != 0 {
			sum ^= mat[i]
		}
	}
	return sum
}

// gf2MatrixSquare sets square to mat × mat.
func gf2MatrixSquare(square, mat []uint32) {
	for i := range 32 {
		square[i] = gf2MatrixTimes(mat, mat[i])
	}
}
