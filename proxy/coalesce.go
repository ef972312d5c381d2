package proxy

import (
	"context"
	"net"
	"net/http"
)

// net/http writes an HTTP/1.1 response through a 4 kB connection buffer:
// a body larger than that leaves in two writes, the buffer (status line,
// headers and the start of the body) and then the rest. Each write is a
// system call, and on loopback or a fast link each one wakes the client to
// read a part of the answer. The proxy's all-flags answers are tens of
// kilobytes, so it asks for those two writes to leave together in one
// writev instead.

// coalesceMin is the smallest body whose writes are coalesced: with more
// than the 4 kB buffer left after it fills, net/http writes the rest at
// once, so the held write is always followed by the one that releases it.
const coalesceMin = 8 << 10

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

// coalesceBody asks r's connection, when it can, to send the write that
// net/http makes next, for a body of n bytes about to be written, together
// with the one after it.
func coalesceBody(r *http.Request, n int) {
	if n < coalesceMin || r.ProtoMajor != 1 {
		return
	}
	if cc, ok := r.Context().Value(coalescingConnKey{}).(*coalescingConn); ok {
		cc.hold = true
	}
}
