package proxy

import (
	"net"
	"testing"
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
