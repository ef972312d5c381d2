package e2e

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestWebUIIntegrations walks the Integrations screen in real Chromium:
// create a webhook (its signing secret shown once), send a test event and
// see the receiver's answer, disable and enable it, see a change and the
// test send in the delivery log; a refused target shows its error next
// to the URL field.
func TestWebUIIntegrations(t *testing.T) {
	var (
		mu     sync.Mutex
		bodies []string
	)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, string(b))
		mu.Unlock()
		w.WriteHeader(202)
		io.WriteString(w, "thanks")
	}))
	t.Cleanup(receiver.Close)
	got := func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), bodies...) }
	h := servertest.Start(t, servertest.NewSQLite(t), func(c *server.Config) { c.Integrations.AllowedTargets = []string{"127.0.0.1/32"} })
	b := newUIBrowser(t)
	b.signIn(h.URL, servertest.AdminUser, servertest.AdminPassword)

	b.open(h.URL + "/integrations")
	b.waitFor("the screen", `document.querySelector("h1").textContent === "Integrations" && !!document.querySelector("#new-webhook")`)
	if s := b.unlabelled(); s != "" {
		t.Errorf("controls without a name: %s", s)
	}
	// A refused target: the error sits next to the URL field.
	b.do("open the webhook form", chromedp.Click(`#new-webhook summary`))
	b.set("#new-webhook-url", "https://169.254.169.254/latest")
	b.do("create", chromedp.Click(`#new-webhook button[type="submit"]`))
	b.waitFor("the refusal", `(document.querySelector("#new-webhook .field-error") || {}).textContent?.includes("cloud metadata address")`)

	b.set("#new-webhook-url", receiver.URL+"/hook")
	b.set("#new-webhook-description", "deploy bot")
	b.do("create", chromedp.Click(`#new-webhook button[type="submit"]`))
	b.waitFor("the secret shown once", `(document.querySelector("#new-signing-secret") || {}).textContent?.startsWith("whsec_")`)
	b.screenshot("integrations-01-created")
	secret := eval[string](b, `document.querySelector("#new-signing-secret").textContent`)
	b.open(h.URL + "/integrations")
	b.waitFor("the card", `!!document.querySelector("#integration-1") && document.querySelector("#integration-1").textContent.includes("deploy bot")`)
	if eval[bool](b, `document.documentElement.outerHTML.includes(`+"`"+secret+"`"+`)`) {
		t.Fatal("the listed integration shows its signing secret")
	}

	// Send a test event: the toast says what the receiver answered.
	b.do("test send", chromedp.Click(`#test-1`))
	b.waitFor("the answer", `(document.querySelector("#toast") || {}).textContent?.includes("answered 202")`)
	if last := got(); len(last) == 0 || !strings.Contains(last[len(last)-1], `"integration-test"`) {
		t.Fatalf("receiver got %v", last)
	}

	// Disable, then enable again.
	b.do("disable", chromedp.Click(`#toggle-1`))
	b.waitFor("disabled", `document.querySelector("#integration-1").textContent.includes("disabled: nothing is sent")`)
	var addon struct{ Enabled bool }
	h.Do(t, "GET", "/api/admin/addons/1", h.AdminToken, nil).Want(t, 200).JSON(t, &addon)
	if addon.Enabled {
		t.Fatal("the integration is still enabled")
	}
	b.do("enable", chromedp.Click(`#toggle-1`))
	b.waitFor("enabled", `document.querySelector("#toggle-1").textContent === "Disable"`)

	// A change is delivered; the log shows it and the test send.
	h.Do(t, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": "from-the-ui"}).Want(t, 201)
	waitAPI(t, "the delivery", func() bool {
		for _, s := range got() {
			if strings.Contains(s, `"from-the-ui"`) {
				return true
			}
		}
		return false
	})
	b.open(h.URL + "/integrations/1/log")
	b.waitFor("the log", `!!document.querySelector("#delivery-log") && document.querySelector("#delivery-log").textContent.includes("from-the-ui")`)
	text := eval[string](b, `document.querySelector("#delivery-log").textContent`)
	for _, want := range []string{"integration-test", "feature-created", "202", "success", "thanks", "msg_"} {
		if !strings.Contains(text, want) {
			t.Errorf("the log lacks %q: %s", want, text)
		}
	}
	b.screenshot("integrations-02-log")
}
