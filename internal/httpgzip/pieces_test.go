package httpgzip

import (
	"bytes"
	"compress/gzip"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"
)

func TestCRC32Combine(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, sizes := range [][2]int{{0, 0}, {0, 5}, {5, 0}, {1, 1}, {3, 1000}, {70000, 3}, {12345, 67890}} {
		a, b := make([]byte, sizes[0]), make([]byte, sizes[1])
		for i := range a {
			a[i] = byte(r.Uint32())
		}
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		want := crc32.ChecksumIEEE(append(append([]byte{}, a...), b...))
		if got := crc32Combine(crc32.ChecksumIEEE(a), crc32.ChecksumIEEE(b), len(b)); got != want {
			t.Errorf("sizes %v: combined %08x, want %08x", sizes, got, want)
		}
	}
}

// TestPiecesMakeOneGzipStream: pieces deflated apart, written by
// WriteGzip, decode (with the standard library's reader, which checks the
// CRC and length) to the concatenation of their parts.
func TestPiecesMakeOneGzipStream(t *testing.T) {
	parts := [][]byte{[]byte(`{"version":2,"features":[`)}
	for i := range 300 {
		parts = append(parts, bytes.Repeat([]byte(`{"name":"flag-`+string(rune('a'+i%26))+`","enabled":true},`), 1+i%40))
	}
	parts = append(parts, []byte(`{}]}`))
	var pieces []Piece
	for i := 0; i < len(parts); i += 7 {
		end := min(i+7, len(parts))
		pieces = append(pieces, Deflate(end == len(parts), parts[i:end]...))
	}
	var out bytes.Buffer
	if err := WriteGzip(&out, pieces); err != nil {
		t.Fatal(err)
	}
	if out.Len() != GzipLen(pieces) {
		t.Errorf("GzipLen %d, wrote %d", GzipLen(pieces), out.Len())
	}
	zr, err := gzip.NewReader(&out)
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	got, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Join(parts, nil); !bytes.Equal(got, want) {
		t.Fatalf("decoded %d bytes, want %d", len(got), len(want))
	}
}
