package wire

import (
	"context"
	"net"
	"net/http"
)

// net/http writes an HTTP/1.1 response through a 4 kB connection buffer:
// a body that does not fit beside the headers leaves in two writes, the
// full buffer (status line, headers and the start of the body) and then the
// rest. Each write is a system call, and on loopback or a fast link each one
// wakes the client to read a part of the answer. The proxy's all-flags
// answers are kilobytes to tens of kilobytes, so for those it asks the
// connection to hold the first write back and send it with the second in
// one writev.

// coalesceMin is the smallest body whose writes are coalesced: a smaller
// one fits in net/http's buffer beside any usual headers and leaves in a
// single write anyway.
const coalesceMin = 2 << 10

// CoalesceWrites prepares srv, which serves a Proxy, to send each large
// response in one system call: it returns ln wrapped, for srv.Serve, and
// sets srv.ConnContext (keeping any function already there) so that the
// proxy's handlers find their connection. Without it the proxy works the
// same, one write more per large response.
func CoalesceWrites(srv *http.Server, ln net.Listener) net.Listener {
	previous := srv.ConnContext
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		if previous != nil {
			ctx = previous(ctx, c)
		}
		if cc, ok := c.(*coalescingConn); ok {
			ctx = context.WithValue(ctx, coalescingConnKey{}, cc)
		}
		return ctx
	}
	return coalescingListener{ln}
}

type coalescingConnKey struct{}

// coalescingListener hands out coalescingConns.
type coalescingListener struct{ net.Listener }

func (l coalescingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &coalescingConn{Conn: c}, nil
}

// coalescingConn can hold one write back and send it with the next. Only
// the goroutine serving the connection writes to it, so it needs no lock.
type coalescingConn struct {
	net.Conn
	hold    bool   // hold the next write
	held    []byte // a held write's bytes (the caller reuses its buffer)
	holding bool
}

// Write sends p, or holds it when asked to, or sends a held write and p in
// one writev.
func (c *coalescingConn) Write(p []byte) (int, error) {
	switch {
	case c.hold:
		c.hold, c.holding = false, true
		c.held = append(c.held[:0], p...)
		return len(p), nil
	case c.holding:
		c.holding = false
		held := len(c.held)
		bufs := net.Buffers{c.held, p}
		n, err := bufs.WriteTo(c.Conn)
		return max(int(n)-held, 0), err
	}
	return c.Conn.Write(p)
}

// release ends a hold: a write still held (no write came after it) is
// sent alone.
func (c *coalescingConn) release() error {
	c.hold = false
	if !c.holding {
		return nil
	}
	c.holding = false
	_, err := c.Conn.Write(c.held)
	return err
}

// WriteCoalesced writes body, whose headers net/http holds, so that the
// response leaves r's connection in as few system calls as it can: a
// large body in one writev with the buffer before it.
func WriteCoalesced(w http.ResponseWriter, r *http.Request, body []byte) {
	cc, _ := r.Context().Value(coalescingConnKey{}).(*coalescingConn)
	if cc == nil || len(body) < coalesceMin || r.ProtoMajor != 1 {
		_, _ = w.Write(body)
		return
	}
	cc.hold = true
	_, _ = w.Write(body)
	// Whatever net/http still buffers leaves now, together with the held
	// write; if nothing was left, the held write leaves alone.
	_ = http.NewResponseController(w).Flush()
	_ = cc.release()
}
