package wire

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"testing"
	"time"
)

// recordingConn records what reaches the connection.
type recordingConn struct {
	net.Conn
	writes [][]byte
}

func (c *recordingConn) Write(p []byte) (int, error) {
	c.writes = append(c.writes, append([]byte(nil), p...))
	return len(p), nil
}

// TestCoalescingConnHoldsOneWrite: asked to hold, the connection keeps the
// next write (copied: the caller reuses its buffer) until the one after it
// and sends both, in order, reporting each caller only its own bytes; other
// writes pass straight through.
func TestCoalescingConnHoldsOneWrite(t *testing.T) {
	rec := &recordingConn{}
	c := &coalescingConn{Conn: rec}
	if n, err := c.Write([]byte("a")); n != 1 || err != nil || len(rec.writes) != 1 {
		t.Fatalf("plain write: n=%d err=%v, %d writes", n, err, len(rec.writes))
	}
	c.hold = true
	first := []byte("head+start")
	if n, err := c.Write(first); n != len(first) || err != nil || len(rec.writes) != 1 {
		t.Fatalf("held write: n=%d err=%v, %d writes reached the connection", n, err, len(rec.writes))
	}
	copy(first, "XXXXXXXXXX") // net/http refills its buffer
	if n, err := c.Write([]byte("rest")); n != 4 || err != nil {
		t.Fatalf("releasing write: n=%d err=%v", n, err)
	}
	var got string
	for _, w := range rec.writes[1:] {
		got += string(w)
	}
	if got != "head+startrest" {
		t.Fatalf("connection got %q", got)
	}
	before := len(rec.writes)
	if _, err := c.Write([]byte("b")); err != nil || len(rec.writes) != before+1 {
		t.Fatal("a write after the release must pass straight through")
	}
}

// TestCoalescingConnReleaseAlone: a held write that no write followed
// leaves alone on release; a release with nothing held writes nothing.
func TestCoalescingConnReleaseAlone(t *testing.T) {
	rec := &recordingConn{}
	c := &coalescingConn{Conn: rec}
	if err := c.release(); err != nil || len(rec.writes) != 0 {
		t.Fatalf("release with nothing held: err=%v, %d writes", err, len(rec.writes))
	}
	c.hold = true
	if _, err := c.Write([]byte("whole answer")); err != nil || len(rec.writes) != 0 {
		t.Fatalf("held write: err=%v, %d writes reached the connection", err, len(rec.writes))
	}
	if err := c.release(); err != nil || len(rec.writes) != 1 || string(rec.writes[0]) != "whole answer" {
		t.Fatalf("release: err=%v, writes %q", err, rec.writes)
	}
	if _, err := c.Write([]byte("next")); err != nil || len(rec.writes) != 2 {
		t.Fatal("a write after the release must pass straight through")
	}
}

// TestWriteCoalescedEveryBodySize: through a real server prepared with
// CoalesceWrites, on one keep-alive connection, every body size around
// net/http's 4 kB buffer and its multiples — whether the rest after the
// buffer is buffered, written at once, or nothing at all — arrives whole
// and nothing stalls.
func TestWriteCoalescedEveryBodySize(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	content := bytes.Repeat([]byte("0123456789abcdef"), 1<<10)
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		w.Header().Set("Content-Length", strconv.Itoa(n))
		WriteCoalesced(w, r, content[:n])
	})}
	go func() { _ = srv.Serve(CoalesceWrites(srv, ln)) }()
	t.Cleanup(func() { _ = srv.Close() })

	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	sizes := []int{0, 1, coalesceMin - 1}
	for n := coalesceMin; n <= 9<<10; n++ {
		sizes = append(sizes, n)
	}
	sizes = append(sizes, 12<<10-1, 12<<10, 16<<10)
	for _, n := range sizes {
		if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
			t.Fatal(err)
		}
		if _, err := fmt.Fprintf(conn, "GET /?n=%d HTTP/1.1\r\nHost: proxy\r\n\r\n", n); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("body of %d bytes: %v (a held write would stall here)", n, err)
		}
		got, err := io.ReadAll(resp.Body)
		if err != nil || !bytes.Equal(got, content[:n]) {
			t.Fatalf("body of %d bytes: got %d bytes, err=%v", n, len(got), err)
		}
	}
}
