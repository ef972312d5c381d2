package cli

import (
	"bytes"
	"context"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/testutil"
)

// runServerOnce starts "bunting server" on a fresh port, waits until it
// answers, and returns what it printed.
func runServerOnce(t *testing.T, dbPath string) string {
	t.Helper()
	port := testutil.FreePort(t)
	env := map[string]string{"DATABASE_PATH": dbPath, "HTTP_HOST": "127.0.0.1", "LOG_LEVEL": "error"}
	ctx, cancel := context.WithCancel(context.Background())
	var stdout, stderr testutil.Buffer
	done := make(chan int, 1)
	go func() {
		done <- Run(ctx, []string{"server", "-port", strconv.Itoa(port)}, func(k string) (string, bool) { v, ok := env[k]; return v, ok }, &stdout, &stderr)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := http.Get("http://127.0.0.1:" + strconv.Itoa(port) + "/health")
		if err == nil {
			res.Body.Close()
			break
		}
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("server did not start: %s", stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("exit code %d: %s", code, stderr.String())
	}
	return stdout.String()
}

func TestServerPrintsGeneratedAdminTokenOnce(t *testing.T) {
	db := filepath.Join(t.TempDir(), "b.db")
	first := runServerOnce(t, db)
	if !strings.Contains(first, "*:*.") {
		t.Fatalf("first start printed %q", first)
	}
	if second := runServerOnce(t, db); strings.Contains(second, "*:*.") {
		t.Fatalf("second start printed a token again: %q", second)
	}
}

func TestServerRejectsBadConfig(t *testing.T) {
	var stderr bytes.Buffer
	env := func(k string) (string, bool) {
		if k == "DATABASE_URL" {
			return "mysql://x", true
		}
		return "", false
	}
	if code := Run(context.Background(), []string{"server"}, env, &bytes.Buffer{}, &stderr); code == 0 || !strings.Contains(stderr.String(), "postgres") {
		t.Fatalf("code %d, stderr %q", code, stderr.String())
	}
}
