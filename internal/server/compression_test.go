package server_test

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"slices"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("not gzip: %v", err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatalf("bad gzip: %v", err)
	}
	return out
}

// TestCompressedAnswers checks gzip on the client API's features (made
// once per ETag), the frontend API and the admin API's JSON: each decoded
// answer is the plain one, the ETag and 304 work across encodings, HEAD,
// small answers and errors are sent as they are.
func TestCompressedAnswers(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		// Send exactly the Accept-Encoding each request names.
		h.Client = &http.Client{Transport: &http.Transport{DisableCompression: true}}
		for i := range 25 {
			name := fmt.Sprintf("compressed-flag-%02d", i)
			createFlag(t, h, name)
			h.Do(t, "POST", envPath(name, "development")+"/strategies", h.AdminToken, map[string]any{"name": "flexibleRollout",
				"parameters":  map[string]string{"rollout": "100", "stickiness": "default", "groupId": name},
				"constraints": []map[string]any{{"contextName": "region", "operator": "NOT_IN", "values": []string{"mars"}}}}).Want(t, 200)
			h.Do(t, "POST", envPath(name, "development")+"/on", h.AdminToken, nil).Want(t, 200)
		}
		routes := []struct{ path, token string }{
			{"/api/client/features", h.ClientToken},
			{"/api/frontend?userId=u1&sessionId=s1", h.FrontendToken},
			{"/api/frontend/all?userId=u1&sessionId=s1", h.FrontendToken},
			{"/api/admin/projects/default/features", h.AdminToken},
			{"/api/admin/events", h.AdminToken},
		}
		for _, rt := range routes {
			plain := h.Do(t, "GET", rt.path, rt.token, nil).Want(t, 200)
			if len(plain.Body) < 1024 {
				t.Fatalf("%s: %d bytes, too small to test compression", rt.path, len(plain.Body))
			}
			if !slices.Contains(plain.Header.Values("Vary"), "Accept-Encoding") || plain.Header.Get("Content-Encoding") != "" {
				t.Errorf("%s plain: Vary %v, Content-Encoding %q", rt.path, plain.Header.Values("Vary"), plain.Header.Get("Content-Encoding"))
			}
			for _, accept := range []string{"gzip", "gzip, deflate, br, zstd", "br;q=1, gzip;q=0.5", "*"} {
				gz := h.Do(t, "GET", rt.path, rt.token, nil, "Accept-Encoding", accept).Want(t, 200)
				if gz.Header.Get("Content-Encoding") != "gzip" || !slices.Contains(gz.Header.Values("Vary"), "Accept-Encoding") {
					t.Fatalf("%s %q: Content-Encoding %q, Vary %v", rt.path, accept, gz.Header.Get("Content-Encoding"), gz.Header.Values("Vary"))
				}
				if got := gunzip(t, gz.Body); !bytes.Equal(got, plain.Body) {
					t.Fatalf("%s %q: decoded answer differs from the plain one:\n%s\n%s", rt.path, accept, got, plain.Body)
				}
				if cl := gz.Header.Get("Content-Length"); cl != "" && cl != fmt.Sprint(len(gz.Body)) {
					t.Errorf("%s: Content-Length %s for %d bytes", rt.path, cl, len(gz.Body))
				}
				if gz.Header.Get("ETag") != plain.Header.Get("ETag") {
					t.Errorf("%s: ETag %q compressed, %q plain", rt.path, gz.Header.Get("ETag"), plain.Header.Get("ETag"))
				}
			}
			for _, accept := range []string{"identity", "br, zstd", "gzip;q=0", "gzip;q=0, *", "*;q=0"} {
				res := h.Do(t, "GET", rt.path, rt.token, nil, "Accept-Encoding", accept).Want(t, 200)
				if res.Header.Get("Content-Encoding") != "" {
					t.Errorf("%s %q: Content-Encoding %q", rt.path, accept, res.Header.Get("Content-Encoding"))
				}
			}
			// HEAD is never compressed.
			head := h.Do(t, "HEAD", rt.path, rt.token, nil, "Accept-Encoding", "gzip").Want(t, 200)
			if head.Header.Get("Content-Encoding") != "" || len(head.Body) != 0 {
				t.Errorf("HEAD %s: Content-Encoding %q, %d body bytes", rt.path, head.Header.Get("Content-Encoding"), len(head.Body))
			}
			// A matching If-None-Match still answers 304, compressed or not.
			if etag := plain.Header.Get("ETag"); etag != "" {
				for _, accept := range []string{"gzip", ""} {
					res := h.Do(t, "GET", rt.path, rt.token, nil, "Accept-Encoding", accept, "If-None-Match", etag).Want(t, http.StatusNotModified)
					if len(res.Body) != 0 || res.Header.Get("Content-Encoding") != "" || !slices.Contains(res.Header.Values("Vary"), "Accept-Encoding") {
						t.Errorf("%s 304 (%q): body %q, Content-Encoding %q, Vary %v", rt.path, accept, res.Body, res.Header.Get("Content-Encoding"), res.Header.Values("Vary"))
					}
				}
			}
		}
		// The client API compresses each answer once: the same bytes again.
		first := h.Do(t, "GET", "/api/client/features", h.ClientToken, nil, "Accept-Encoding", "gzip").Want(t, 200)
		second := h.Do(t, "GET", "/api/client/features", h.ClientToken, nil, "Accept-Encoding", "gzip").Want(t, 200)
		if !bytes.Equal(first.Body, second.Body) {
			t.Errorf("the cached compressed answer changed between two requests")
		}
		// A change makes a new answer, compressed anew.
		h.Do(t, "POST", envPath("compressed-flag-00", "development")+"/off", h.AdminToken, nil).Want(t, 200)
		plain := h.Do(t, "GET", "/api/client/features", h.ClientToken, nil).Want(t, 200)
		third := h.Do(t, "GET", "/api/client/features", h.ClientToken, nil, "Accept-Encoding", "gzip").Want(t, 200)
		if bytes.Equal(third.Body, first.Body) || !bytes.Equal(gunzip(t, third.Body), plain.Body) || third.Header.Get("ETag") != plain.Header.Get("ETag") {
			t.Errorf("after a change the compressed answer is not the new plain one")
		}
		// Small answers and errors are sent as they are.
		for _, c := range []struct {
			path, token string
			status      int
		}{
			{"/api/admin/environments/development", h.AdminToken, 200},
			{featurePath("nope"), h.AdminToken, 404},
			{"/api/admin/projects/default/features", "", 401},
			{"/api/client/features", "", 401},
			{"/api/frontend", h.ClientToken, 403},
		} {
			res := h.Do(t, "GET", c.path, c.token, nil, "Accept-Encoding", "gzip").Want(t, c.status)
			if res.Header.Get("Content-Encoding") != "" || !bytes.Contains(res.Body, []byte(`"`)) {
				t.Errorf("%s: Content-Encoding %q, body %q", c.path, res.Header.Get("Content-Encoding"), res.Body)
			}
		}
	})
}
