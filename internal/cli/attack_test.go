package cli

import (
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/testutil"
)

// attackSetup is a `bunting server` on a fresh PostgreSQL database with
// two flags on in development: real-a, and real-b with a variant.
type attackSetup struct {
	db                      servertest.Database
	url                     string
	admin, client, frontend string
	proxyURL                string // of the last proxy started
	proxyKey, proxyAppName  string
}

func newAttackSetup(t *testing.T) *attackSetup {
	t.Helper()
	a := &attackSetup{db: servertest.NewPostgres(t), admin: "*:*.attack-admin", client: "default:development.attack-client",
		frontend: "default:development.attack-frontend", proxyKey: "attack-client-key", proxyAppName: "attack-proxy"}
	port := testutil.FreePort(t)
	a.url = "http://127.0.0.1:" + strconv.Itoa(port)
	server := startBunting(t, map[string]string{"PORT": strconv.Itoa(port), "HTTP_HOST": "127.0.0.1", "DATABASE_URL": a.db.URL,
		"INIT_ADMIN_API_TOKENS": a.admin, "INIT_CLIENT_API_TOKENS": a.client, "INIT_FRONTEND_API_TOKENS": a.frontend, "LOG_LEVEL": "warn",
		"USAGE_FLUSH_INTERVAL": "200ms"}, "server")
	server.waitFor(t, a.url+"/health", nil, http.StatusOK)
	const features = "/api/admin/projects/default/features"
	for _, name := range []string{"real-a", "real-b"} {
		if code, body := testutil.Call(t, http.MethodPost, a.url+features, a.admin, `{"name":"`+name+`"}`); code != http.StatusCreated {
			t.Fatalf("create %s: %d %s", name, code, body)
		}
		if code, body := testutil.Call(t, http.MethodPost, a.url+features+"/"+name+"/environments/development/on", a.admin, ""); code != http.StatusOK {
			t.Fatalf("turn on %s: %d %s", name, code, body)
		}
	}
	if code, body := testutil.Call(t, http.MethodPut, a.url+features+"/real-b/environments/development/variants", a.admin, `[{"name":"blue","weight":1000}]`); code != http.StatusOK {
		t.Fatalf("variants: %d %s", code, body)
	}
	return a
}

// startProxy runs `bunting proxy` against the server with extra settings
// and waits until it serves real-a.
func (a *attackSetup) startProxy(t *testing.T, extra map[string]string) *buntingProcess {
	t.Helper()
	port := testutil.FreePort(t)
	a.proxyURL = "http://127.0.0.1:" + strconv.Itoa(port)
	env := map[string]string{"PORT": strconv.Itoa(port), "LISTEN_ADDRESS": "127.0.0.1", "UPSTREAM_URL": a.url + "/api",
		"UPSTREAM_API_TOKEN": a.client, "UPSTREAM_PROXY_CLIENT_KEYS": a.proxyKey, "UPSTREAM_APP_NAME": a.proxyAppName,
		"UPSTREAM_FETCH_INTERVAL": "200", "UPSTREAM_METRICS_INTERVAL": "300", "EXP_BACKUP_DIR": t.TempDir(), "LOG_LEVEL": "warn"}
	for k, v := range extra {
		env[k] = v
	}
	p := startBunting(t, env, "proxy")
	p.waitFor(t, a.proxyURL+"/proxy/health", nil, http.StatusOK)
	return p
}

// usageOf is the yes count of a flag the proxy reported upstream.
func (a *attackSetup) usageOf(t *testing.T, flag string) int64 {
	t.Helper()
	code, body := testutil.Call(t, http.MethodGet, a.url+"/api/admin/client-metrics/features/"+flag, a.admin, "")
	if code != http.StatusOK {
		t.Fatalf("usage of %s: %d %s", flag, code, body)
	}
	var u struct {
		Data []struct {
			AppName string
			Yes     int64
		}
	}
	if err := json.Unmarshal([]byte(body), &u); err != nil {
		t.Fatal(err)
	}
	var yes int64
	for _, d := range u.Data {
		if d.AppName == a.proxyAppName {
			yes += d.Yes
		}
	}
	return yes
}

// waitUsage waits until the proxy's reported yes count of flag is want.
func (a *attackSetup) waitUsage(t *testing.T, flag string, want int64) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for {
		got := a.usageOf(t, flag)
		if got == want {
			return
		}
		if got > want || time.Now().After(deadline) {
			t.Fatalf("upstream has %d uses of %s from the proxy, want %d", got, flag, want)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func randomName(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// metricsBody is an SDK metrics post of toggles.
func metricsBody(toggles map[string]any) string {
	now := time.Now().UTC().Format(time.RFC3339)
	b, _ := json.Marshal(map[string]any{"appName": "sdk", "instanceId": "i", "bucket": map[string]any{"start": now, "stop": now, "toggles": toggles}})
	return string(b)
}

// poisonBody is a metrics post of 1,500 random names (about 90 kB).
func poisonBody() string {
	toggles := map[string]any{}
	for range 1500 {
		toggles[randomName(20)] = map[string]any{"yes": 1, "no": 1, "variants": map[string]any{"v": 1}}
	}
	return metricsBody(toggles)
}

// The metrics-poisoning attack: a holder of the public client key posts
// 60 metrics bodies of 1,500 random names, a NUL name and overflowing
// counts, through the proxy and straight to the server (with the public
// frontend token). Usage of the real flags still arrives upstream, exactly,
// the proxy's memory stays flat, and the database holds usage of real
// flags only.
func TestMetricsPoisoningAttack(t *testing.T) {
	t.Parallel()
	a := newAttackSetup(t)
	proxy := a.startProxy(t, nil)
	before := proxy.memory(t)

	realUse := func() {
		if code, body := testutil.Call(t, http.MethodPost, a.proxyURL+"/proxy", a.proxyKey, `{"toggles":["real-a"]}`); code != http.StatusOK {
			t.Errorf("real use: %d %s", code, body)
		}
	}
	post := func(url, token, body string, want int) {
		if code, answer := testutil.Call(t, http.MethodPost, url, token, body); code != want {
			t.Errorf("POST %s: %d %s, want %d", url, code, answer, want)
		}
	}
	var wg sync.WaitGroup
	for worker := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 15 {
				post(a.proxyURL+"/proxy/client/metrics", a.proxyKey, poisonBody(), http.StatusOK)
				if i%3 == 0 {
					realUse() // 4 workers × 5 = 20
				}
			}
			if worker == 0 {
				post(a.proxyURL+"/proxy/client/metrics", a.proxyKey, metricsBody(map[string]any{"nul\u0000name": map[string]any{"yes": 1, "no": 1}}), http.StatusOK)
			}
		}()
	}
	// Overflowing counts of a real flag, twice, and a legitimate SDK's
	// counts of real-a, three times.
	huge := metricsBody(map[string]any{"real-b": map[string]any{"yes": int64(math.MaxInt64), "no": int64(math.MaxInt64), "variants": map[string]any{"blue": int64(math.MaxInt64)}}})
	post(a.proxyURL+"/proxy/client/metrics", a.proxyKey, huge, http.StatusOK)
	post(a.proxyURL+"/proxy/client/metrics", a.proxyKey, huge, http.StatusOK)
	for range 3 {
		post(a.proxyURL+"/proxy/client/metrics", a.proxyKey, metricsBody(map[string]any{"real-a": map[string]any{"yes": 5, "no": 0}}), http.StatusOK)
	}
	// The same straight at the server, with the public frontend token and
	// the client token.
	for range 10 {
		post(a.url+"/api/frontend/client/metrics", a.frontend, poisonBody(), http.StatusOK)
		post(a.url+"/api/client/metrics", a.client, poisonBody(), http.StatusAccepted)
	}
	// The server refuses a NUL anywhere in a body at the edge (400); the
	// proxy above drops the unknown name and answers 200.
	post(a.url+"/api/frontend/client/metrics", a.frontend, metricsBody(map[string]any{"nul\u0000": map[string]any{"yes": 1}}), http.StatusBadRequest)
	post(a.url+"/api/client/metrics", a.client, huge, http.StatusAccepted)
	for range 20 {
		realUse()
	}
	wg.Wait()
	a.waitUsage(t, "real-a", 40+15)
	after := proxy.memory(t)

	// Reporting goes on.
	for range 10 {
		realUse()
	}
	a.waitUsage(t, "real-a", 65)
	if got := a.usageOf(t, "real-b"); got != math.MaxInt64 {
		t.Errorf("real-b's overflowing counts: %d, want the largest int64", got)
	}
	t.Logf("proxy memory before the attack %v, after 60 poisoned posts of 1,500 names %v (growth %.1f MB)",
		before, after, float64(after.rss-before.rss)/(1<<20))
	if growth := after.rss - before.rss; growth > 16<<20 {
		t.Errorf("the proxy grew by %.1f MB", float64(growth)/(1<<20))
	}
	_, prom := testutil.Call(t, http.MethodGet, a.proxyURL+"/proxy/internal-backstage/prometheus", "", "")
	for _, line := range strings.Split(prom, "\n") {
		if strings.HasPrefix(line, "bunting_proxy_upstream_metrics_posts_total") && !strings.Contains(line, `result="ok"`) {
			t.Errorf("a metrics post upstream failed: %s", line)
		}
	}

	db, err := sql.Open("pgx", a.db.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT DISTINCT feature_name FROM client_metrics_hourly UNION SELECT DISTINCT feature_name || '/' || variant FROM client_metrics_variants_hourly`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var stored []string
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			t.Fatal(err)
		}
		stored = append(stored, name)
	}
	slices.Sort(stored)
	if strings.Join(stored, ",") != "real-a,real-b,real-b/blue" {
		t.Errorf("the database holds usage of %v, want real-a and real-b only", stored)
	}
}

// toggleListBody is a POST /proxy body listing names.
func toggleListBody(names []string) string {
	return `{"toggles":["` + strings.Join(names, `","`) + `"]}`
}

// The POST-amplification attack: 64 clients at once send toggle lists that
// fill the body limit (20,000 two-letter names, 1,000 long unknown names,
// one name 25,000 times); then one client sends 16 MB to a proxy whose body
// limit was raised. The proxy answers each list at most once per distinct
// name and refuses lists over 1,000 names, so its peak memory stays
// bounded.
func TestPostAmplificationAttack(t *testing.T) {
	t.Parallel()
	a := newAttackSetup(t)
	proxy := a.startProxy(t, map[string]string{"UPSTREAM_METRICS_INTERVAL": "0"})
	before := proxy.memory(t)

	const alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
	short, long, same := make([]string, 20000), make([]string, 1000), make([]string, 25000)
	for i := range short {
		short[i] = string([]byte{alphabet[i%64], alphabet[i/64%64]})
	}
	for i := range same {
		same[i] = "a"
	}
	for i := range long {
		long[i] = fmt.Sprintf("%03d-%s", i, strings.Repeat("x", 88))
	}
	bodies := []struct {
		body    string
		status  int
		toggles int
	}{
		{toggleListBody(short), http.StatusBadRequest, 0},
		{toggleListBody(long), http.StatusOK, 1000},
		{toggleListBody(same), http.StatusBadRequest, 0},
		{toggleListBody(same[:1000]), http.StatusOK, 1},
	}
	for _, b := range bodies {
		if len(b.body) > 100*1024 {
			t.Fatalf("a body of %d bytes is over the default limit", len(b.body))
		}
	}
	var wg sync.WaitGroup
	for client := range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 8 {
				b := bodies[(client+i)%len(bodies)]
				code, answer := testutil.Call(t, http.MethodPost, a.proxyURL+"/proxy", a.proxyKey, b.body)
				if code != b.status {
					t.Errorf("status %d, want %d: %.200s", code, b.status, answer)
					return
				}
				var got struct{ Toggles []json.RawMessage }
				if b.toggles > 0 && (json.Unmarshal([]byte(answer), &got) != nil || len(got.Toggles) != b.toggles) {
					t.Errorf("%d toggles answered, want %d", len(got.Toggles), b.toggles)
				}
			}
		}()
	}
	wg.Wait()
	after := proxy.memory(t)
	t.Logf("proxy memory before %v, after 512 toggle-list requests of up to 100 kB, 64 at a time, %v (peak growth %.1f MB)",
		before, after, float64(after.peak-before.peak)/(1<<20))
	if growth := after.peak - before.peak; growth > 40<<20 {
		t.Errorf("the proxy's peak memory grew by %.1f MB", float64(growth)/(1<<20))
	}

	// A raised body limit: one request of 16 MB, 1.4 million names.
	raised := a.startProxy(t, map[string]string{"UPSTREAM_METRICS_INTERVAL": "0", "EXP_MAX_BODY_BYTES": strconv.Itoa(16 << 20)})
	before = raised.memory(t)
	huge := make([]string, 0, 1_400_000)
	for i := range cap(huge) {
		huge = append(huge, fmt.Sprintf("n%07d", i))
	}
	body := toggleListBody(huge)
	if code, answer := testutil.Call(t, http.MethodPost, a.proxyURL+"/proxy", a.proxyKey, body); code != http.StatusBadRequest {
		t.Fatalf("%d names: %d %.200s", len(huge), code, answer)
	}
	after = raised.memory(t)
	t.Logf("raised body limit: proxy memory before %v, after one request of %.1f MB %v (peak growth %.1f MB)",
		before, float64(len(body))/(1<<20), after, float64(after.peak-before.peak)/(1<<20))
	if growth := after.peak - before.peak; growth > 3*int64(len(body)) {
		t.Errorf("one request of %d bytes grew the proxy's peak memory by %.1f MB", len(body), float64(growth)/(1<<20))
	}
}
