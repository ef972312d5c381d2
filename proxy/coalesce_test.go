package proxy_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bunting-flags/bunting/engine/enginetest"
)

// TestCoalescedAnswersOnOneConnection: on one keep-alive connection to a
// proxy prepared with CoalesceWrites, large answers (whose two writes leave
// together) arrive whole and in order, and the answers around them — a
// HEAD, which has no body to release a held write, and small ones, which
// net/http writes at once — are not held back.
func TestCoalescedAnswersOnOneConnection(t *testing.T) {
	payload, err := json.Marshal(enginetest.Generate(1000, 3))
	require.NoError(t, err)
	r := startReady(t, testConfig(newFakeUpstream(t, string(payload))))
	// Every stickiness field is set, so that nothing is random.
	const target = "/proxy?userId=u1&sessionId=s1&properties[tenantId]=t1"

	conn, err := net.Dial("tcp", r.srv.Listener.Addr().String())
	require.NoError(t, err)
	defer conn.Close()
	br := bufio.NewReader(conn)
	send := func(method, target string, body ...string) (*http.Response, string) {
		t.Helper()
		require.NoError(t, conn.SetDeadline(time.Now().Add(5*time.Second)), "a held write would stall the connection")
		content := strings.Join(body, "")
		_, err := fmt.Fprintf(conn, "%s %s HTTP/1.1\r\nHost: proxy\r\nAuthorization: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
			method, target, clientKey, len(content), content)
		require.NoError(t, err)
		req, _ := http.NewRequest(method, target, nil)
		resp, err := http.ReadResponse(br, req)
		require.NoError(t, err)
		answer, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(answer)
	}
	_, want := send(http.MethodGet, target)
	require.Greater(t, len(want), 32<<10, "the answer must be large enough to be coalesced")
	for range 3 {
		resp, body := send(http.MethodGet, target)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.True(t, body == want, "a coalesced answer differs from the first one (%d bytes, want %d)", len(body), len(want))
		resp, body = send(http.MethodHead, target)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Empty(t, body)
		resp, body = send(http.MethodPost, "/proxy", `{"toggles":["no-such-flag"],"context":{"userId":"u1"}}`)
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Contains(t, body, `"no-such-flag"`)
		resp, body = send(http.MethodGet, "/proxy/health")
		require.Equal(t, http.StatusOK, resp.StatusCode)
		require.Equal(t, "ok", body)
	}
}
