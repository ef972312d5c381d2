package httpserver_test

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/httpserver"
)

// serve runs h under l on loopback until the test ends.
func serve(t *testing.T, l httpserver.Limits, h http.Handler) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := l.Server(h, nil)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })
	return ln.Addr().String()
}

// ticks writes a line every 50 ms for 600 ms, flushing each.
func ticks(w http.ResponseWriter, r *http.Request) {
	rc := http.NewResponseController(w)
	for i := range 12 {
		if _, err := fmt.Fprintf(w, "tick %d\n", i); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		select {
		case <-r.Context().Done():
			return
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// lines reads the answer to GET path and counts its tick lines.
func lines(t *testing.T, addr, path string) int {
	t.Helper()
	resp, err := http.Get("http://" + addr + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	n := 0
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "tick ") {
			n++
		}
	}
	return n
}

// A route wrapped in Streaming outlives the read and write timeouts; the
// same handler without it is cut off by them.
func TestStreamingLiftsTheTimeouts(t *testing.T) {
	l := httpserver.DefaultLimits()
	l.ReadTimeout, l.WriteTimeout = 200*time.Millisecond, 200*time.Millisecond
	mux := http.NewServeMux()
	mux.Handle("GET /stream", httpserver.Streaming(http.HandlerFunc(ticks)))
	mux.HandleFunc("GET /plain", ticks)
	addr := serve(t, l, mux)
	if n := lines(t, addr, "/stream"); n != 12 {
		t.Errorf("the streaming route sent %d of 12 lines", n)
	}
	if n := lines(t, addr, "/plain"); n >= 12 {
		t.Errorf("the plain route sent all %d lines past a 200 ms write timeout", n)
	}
}

// Headers over MaxHeaderBytes get 431.
func TestMaxHeaderBytes(t *testing.T) {
	l := httpserver.DefaultLimits()
	l.MaxHeaderBytes = 1 << 10
	addr := serve(t, l, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	for size, want := range map[int]int{100: http.StatusOK, 20 << 10: http.StatusRequestHeaderFieldsTooLarge} {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+"/", nil)
		req.Header.Set("X-Big", strings.Repeat("x", size))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("a %d-byte header: %d, want %d", size, resp.StatusCode, want)
		}
	}
}

func TestOptionsFromEnv(t *testing.T) {
	env := map[string]string{
		"HTTP_READ_HEADER_TIMEOUT": "2s", "HTTP_READ_TIMEOUT": "1500", "HTTP_WRITE_TIMEOUT": " 1m ",
		"HTTP_IDLE_TIMEOUT": "", "HTTP_MAX_HEADER_BYTES": "4096",
	}
	l := httpserver.DefaultLimits()
	if err := l.FromEnv(func(k string) (string, bool) { v, ok := env[k]; return v, ok }); err != nil {
		t.Fatal(err)
	}
	want := httpserver.Limits{ReadHeaderTimeout: 2 * time.Second, ReadTimeout: 1500 * time.Millisecond,
		WriteTimeout: time.Minute, IdleTimeout: httpserver.DefaultLimits().IdleTimeout, MaxHeaderBytes: 4096}
	if l != want {
		t.Fatalf("got %+v, want %+v", l, want)
	}
	for name, v := range map[string]string{"HTTP_READ_TIMEOUT": "soon", "HTTP_IDLE_TIMEOUT": "0", "HTTP_WRITE_TIMEOUT": "-1s", "HTTP_MAX_HEADER_BYTES": "1kB"} {
		err := l.FromEnv(func(k string) (string, bool) { return v, k == name })
		if err == nil || !strings.Contains(err.Error(), name) {
			t.Errorf("%s=%q: error %v, want one naming the variable", name, v, err)
		}
	}
	if err := (httpserver.Limits{}).Validate(); err == nil || !strings.Contains(err.Error(), "HTTP_READ_TIMEOUT") {
		t.Errorf("zero limits: %v", err)
	}
	if err := httpserver.DefaultLimits().Validate(); err != nil {
		t.Error(err)
	}
}
