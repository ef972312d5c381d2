package cli

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/testutil"
)

// Short limits so that the test takes seconds.
var slowTestLimits = map[string]string{
	"HTTP_READ_HEADER_TIMEOUT": "500ms",
	"HTTP_READ_TIMEOUT":        "1s",
	"HTTP_IDLE_TIMEOUT":        "1s",
	"LOG_LEVEL":                "error",
}

// slowClients opens connections to addr that hold it open as slowloris
// clients do: most send a request's headers and then its body one byte
// every 100 ms, some send their headers one byte at a time, and some make
// one request and then sit idle on the kept-alive connection. It returns
// how long the server took to close each one; a connection still open
// after limit counts as limit.
func slowClients(t *testing.T, addr, path, key string, bodies, headers, idle int, limit time.Duration) []time.Duration {
	t.Helper()
	var mu sync.Mutex
	var open []time.Duration
	var wg sync.WaitGroup
	request := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n{", path, addr, key)
	client := func(send func(c net.Conn, closed <-chan struct{})) {
		defer wg.Done()
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Error(err)
			return
		}
		defer c.Close()
		start := time.Now()
		closed := make(chan struct{})
		go func() {
			_, _ = io.Copy(io.Discard, c) // returns when the server closes the connection
			close(closed)
		}()
		go send(c, closed)
		select {
		case <-closed:
		case <-time.After(limit):
		}
		mu.Lock()
		open = append(open, time.Since(start))
		mu.Unlock()
	}
	trickle := func(c net.Conn, closed <-chan struct{}, data string) {
		for i := 0; ; i++ {
			b := " "
			if i < len(data) {
				b = data[i : i+1]
			}
			if _, err := c.Write([]byte(b)); err != nil {
				return
			}
			select {
			case <-closed:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	for range bodies {
		wg.Add(1)
		go client(func(c net.Conn, closed <-chan struct{}) {
			if _, err := io.WriteString(c, request); err == nil {
				trickle(c, closed, "")
			}
		})
	}
	for range headers {
		wg.Add(1)
		go client(func(c net.Conn, closed <-chan struct{}) { trickle(c, closed, request) })
	}
	for range idle {
		wg.Add(1)
		go client(func(c net.Conn, closed <-chan struct{}) {
			_, _ = fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: %s\r\nAuthorization: %s\r\n\r\n", path, addr, key)
		})
	}
	wg.Wait()
	return open
}

// checkClosed fails unless the server closed every slow connection
// within the read timeout plus a margin for a loaded machine.
func checkClosed(t *testing.T, name string, open []time.Duration, within time.Duration) {
	t.Helper()
	var longest time.Duration
	late := 0
	for _, d := range open {
		longest = max(longest, d)
		if d >= within {
			late++
		}
	}
	t.Logf("%s: %d slow connections, the longest closed after %v", name, len(open), longest.Round(10*time.Millisecond))
	if late > 0 {
		t.Errorf("%s: %d of %d slow connections were still open after %v", name, late, len(open), within)
	}
}

// The flag server, the proxy and the all-in-one mode close connections
// that trickle a body or their headers, or sit idle, once the read,
// header or idle timeout passes (1 s, 0.5 s, 1 s here).
func TestSlowClientsAreDisconnected(t *testing.T) {
	t.Parallel()
	const within = 3 * time.Second // 1 s timeouts, a loaded machine
	const bodies, headers, idle = 150, 25, 25

	t.Run("server", func(t *testing.T) {
		port := testutil.FreePort(t)
		env := map[string]string{"PORT": strconv.Itoa(port), "HTTP_HOST": "127.0.0.1",
			"DATABASE_PATH": filepath.Join(t.TempDir(), "b.db"), "INIT_ADMIN_API_TOKENS": "*:*.slow-admin"}
		for k, v := range slowTestLimits {
			env[k] = v
		}
		p := startBunting(t, env, "server")
		addr := "127.0.0.1:" + strconv.Itoa(port)
		p.waitFor(t, "http://"+addr+"/health", nil, http.StatusOK)
		open := slowClients(t, addr, "/api/admin/projects/default/features", "*:*.slow-admin", bodies, headers, idle, 2*within)
		checkClosed(t, "bunting server", open, within)
	})

	t.Run("proxy", func(t *testing.T) {
		upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/api/client/features" {
				_, _ = io.WriteString(w, `{"version":2,"features":[{"name":"f","enabled":true,"strategies":[{"name":"default"}]}]}`)
				return
			}
			w.WriteHeader(http.StatusAccepted)
		}))
		defer upstream.Close()
		port := testutil.FreePort(t)
		env := map[string]string{"PORT": strconv.Itoa(port), "LISTEN_ADDRESS": "127.0.0.1", "UPSTREAM_URL": upstream.URL + "/api",
			"UPSTREAM_API_TOKEN": "t", "UPSTREAM_PROXY_CLIENT_KEYS": "slow-key", "EXP_BACKUP_DIR": t.TempDir()}
		for k, v := range slowTestLimits {
			env[k] = v
		}
		p := startBunting(t, env, "proxy")
		addr := "127.0.0.1:" + strconv.Itoa(port)
		p.waitFor(t, "http://"+addr+"/proxy/health", nil, http.StatusOK)
		open := slowClients(t, addr, "/proxy", "slow-key", bodies, headers, idle, 2*within)
		checkClosed(t, "bunting proxy", open, within)
	})

	t.Run("all-in-one", func(t *testing.T) {
		serverPort, proxyPort := testutil.FreePort(t), testutil.FreePort(t)
		env := map[string]string{"HTTP_PORT": strconv.Itoa(serverPort), "PROXY_PORT": strconv.Itoa(proxyPort),
			"DATABASE_PATH": filepath.Join(t.TempDir(), "b.db")}
		for k, v := range slowTestLimits {
			env[k] = v
		}
		p := startBunting(t, env)
		p.waitFor(t, "http://127.0.0.1:"+strconv.Itoa(proxyPort)+"/proxy/health", nil, http.StatusOK)
		var wg sync.WaitGroup
		for _, c := range []struct{ name, addr, path string }{
			{"all-in-one server", "127.0.0.1:" + strconv.Itoa(serverPort), "/api/admin/projects/default/features"},
			{"all-in-one proxy", "127.0.0.1:" + strconv.Itoa(proxyPort), "/proxy"},
		} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				checkClosed(t, c.name, slowClients(t, c.addr, c.path, "any", bodies/2, headers, idle, 2*within), within)
			}()
		}
		wg.Wait()
	})
}
