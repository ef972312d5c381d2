package httpserver

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// BenchmarkPageHeaders is what the security headers cost one small answer
// over loopback (set, serialised, sent and parsed), next to the same
// answer without them.
func BenchmarkPageHeaders(b *testing.B) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header()["Content-Type"] = []string{"application/json"}
		_, _ = w.Write([]byte(`{"ok":true}`))
	})
	for _, c := range []struct {
		name string
		h    http.Handler
	}{{"without", ok}, {"nosniff", NoSniff(ok)}, {"page-headers", PageHeaders(ok)}} {
		b.Run(c.name, func(b *testing.B) {
			srv := httptest.NewServer(c.h)
			defer srv.Close()
			client := srv.Client()
			b.ReportAllocs()
			for b.Loop() {
				res, err := client.Get(srv.URL)
				if err != nil {
					b.Fatal(err)
				}
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
		})
	}
}
