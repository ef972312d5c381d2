package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"testing"
	"time"
)

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("free port: %v", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// Eventually calls check every interval until it returns nil or timeout
// passes, then fails t with the last error.
func Eventually(t testing.TB, timeout, interval time.Duration, what string, check func() error) {
	t.Helper()
	if err := poll(timeout, interval, check); err != nil {
		t.Fatalf("%s: not within %s: %v", what, timeout, err)
	}
}

func poll(timeout, interval time.Duration, check func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return nil
		}
		if errors.Is(err, errExited) || time.Now().After(deadline) {
			return err
		}
		time.Sleep(interval)
	}
}

// WaitHTTP waits until GET url answers wantStatus, failing t after timeout or
// as soon as p (when not nil) exits.
func WaitHTTP(t testing.TB, p *Process, url string, header http.Header, wantStatus int, timeout time.Duration) {
	t.Helper()
	client := &http.Client{Timeout: 2 * time.Second}
	err := poll(timeout, 250*time.Millisecond, func() error {
		if p != nil {
			if err := p.checkAlive(); err != nil {
				return err
			}
		}
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		for k, vs := range header {
			req.Header[k] = vs
		}
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		resp.Body.Close()
		if resp.StatusCode != wantStatus {
			return fmt.Errorf("GET %s: status %d, body %q", url, resp.StatusCode, body)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("waiting for %s: %v", url, err)
	}
}
