package webui_test

import (
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// flagsServer starts a server on SQLite holding n flags (imported in one
// state document), on in development for every third, and returns it with
// an admin session cookie.
func flagsServer(tb testing.TB, n int) (*servertest.Harness, string) {
	tb.Helper()
	h := servertest.Start(tb, servertest.NewSQLite(tb), func(c *server.Config) { c.BodyLimit = 64 << 20 })
	var features, envs []map[string]any
	for i := range n {
		name := fmt.Sprintf("flag-%05d", i)
		features = append(features, map[string]any{"name": name, "project": "default", "type": "release", "description": "flag number " + fmt.Sprint(i)})
		envs = append(envs, map[string]any{"name": name, "featureName": name, "environment": "development", "enabled": i%3 == 0})
	}
	h.Do(tb, "POST", "/api/admin/state/import", h.AdminToken, map[string]any{"version": 1, "features": features, "featureEnvironments": envs}).Want(tb, 202)
	res := h.Do(tb, "POST", "/auth/simple/login", "", map[string]string{"username": servertest.AdminUser, "password": servertest.AdminPassword}).Want(tb, 200)
	cookie := strings.SplitN(res.Header.Get("Set-Cookie"), ";", 2)[0]
	return h, cookie
}

// get fetches path with the cookie, gzip accepted, and returns the bytes
// sent over the wire and the decoded body.
func get(tb testing.TB, h *servertest.Harness, path, cookie string) (wire int, body string) {
	tb.Helper()
	req, _ := http.NewRequest("GET", h.URL+path, nil)
	req.Header.Set("Cookie", cookie)
	req.Header.Set("Accept-Encoding", "gzip")
	tr := &http.Transport{DisableCompression: true}
	res, err := (&http.Client{Transport: tr}).Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	raw, _ := io.ReadAll(res.Body)
	if res.StatusCode != 200 {
		tb.Fatalf("GET %s: %d %s", path, res.StatusCode, raw)
	}
	if res.Header.Get("Content-Encoding") != "gzip" {
		return len(raw), string(raw)
	}
	zr, err := gzip.NewReader(strings.NewReader(string(raw)))
	if err != nil {
		tb.Fatal(err)
	}
	dec, _ := io.ReadAll(zr)
	return len(raw), string(dec)
}

// TestFlagsPageWith5000Flags checks the flags page with 5,000 flags: the
// first page lists 50 with the total, the next link pages on, a search
// narrows, and one page load (HTML, CSS, scripts, compressed) stays under
// 300 kB.
func TestFlagsPageWith5000Flags(t *testing.T) {
	h, cookie := flagsServer(t, 5000)
	wire, html := get(t, h, "/flags", cookie)
	if !strings.Contains(html, "Flags 1–50 of 5000") || strings.Count(html, `href="/projects/default/flags/flag-`) != 50 {
		t.Fatalf("the first page does not list 50 of 5000 flags")
	}
	total := wire
	for _, src := range regexp.MustCompile(`(?:src|href)="(/static/[^"]+)"`).FindAllStringSubmatch(html, -1) {
		n, _ := get(t, h, src[1], cookie)
		total += n
	}
	t.Logf("one flags page load transfers %d bytes compressed (HTML %d)", total, wire)
	if total >= 300_000 {
		t.Errorf("one page load transfers %d bytes, the budget is 300 kB", total)
	}
	_, page3 := get(t, h, "/flags?offset=100", cookie)
	if !strings.Contains(page3, "Flags 101–150 of 5000") || !strings.Contains(page3, "flag-00100") {
		t.Errorf("the third page is not flags 101–150")
	}
	_, found := get(t, h, "/flags?query=flag-0421&state=development:on", cookie)
	// flag-04210 … flag-04219, on in development when divisible by 3: 04212, 04215, 04218.
	if !strings.Contains(found, "Flags 1–3 of 3") || !strings.Contains(found, "flag-04215") || strings.Contains(found, "flag-04211") {
		t.Errorf("the search for flag-0421 on in development does not find flag-04212, -04215 and -04218: %s", regexp.MustCompile(`Flags \d[^<]*|No flags match`).FindString(found))
	}
}

// BenchmarkFlagsPage measures the server time of the flags page with 5,000
// flags (p50 and p99 as metrics) next to the admin API search it reads
// through, as the baseline.
func BenchmarkFlagsPage(b *testing.B) {
	h, cookie := flagsServer(b, 5000)
	for _, c := range []struct{ name, path string }{
		{"api-search-baseline", "/api/admin/search/features?offset=2500&limit=50"},
		{"ui-flags-page", "/flags?offset=2500"},
		{"ui-flags-search", "/flags?query=flag-04&state=development:on"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var times []time.Duration
			for b.Loop() {
				start := time.Now()
				get(b, h, c.path, cookie)
				times = append(times, time.Since(start))
			}
			slices.Sort(times)
			b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(times[len(times)*99/100].Microseconds())/1000, "p99-ms")
		})
	}
}
