package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// sdkSees reports whether an SDK of production (the client API) gets flag
// on.
func sdkSees(t *testing.T, h *servertest.Harness, flag string) bool {
	t.Helper()
	var body struct {
		Features []struct {
			Name    string
			Enabled bool
		}
	}
	h.Do(t, "GET", "/api/client/features", servertest.ProdToken, nil).Want(t, 200).JSON(t, &body)
	for _, f := range body.Features {
		if f.Name == flag {
			return f.Enabled
		}
	}
	t.Fatalf("the SDK is not served %s", flag)
	return false
}

// TestWebUIChangeRequests is the four-eyes journey in real Chromium, with
// two people in two browsers, on both databases: Alice switches a flag on
// in production, where change requests are on, and the switch goes into
// her draft (the flag page says so); she sends it to review and has no
// way to approve it; Bob, in his own browser, finds it among the open
// requests and approves it; Alice applies it, and only then do SDKs see
// the flag on. A second change is scheduled a few seconds ahead and
// applies itself. The event log shows each request's whole life.
func TestWebUIChangeRequests(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		for _, who := range []string{"alice", "bob"} {
			h.Do(t, "POST", "/api/admin/user-admin", h.AdminToken, map[string]any{"username": who, "password": who + "-password", "rootRole": "Editor"}).Want(t, 201)
		}
		h.Do(t, "PUT", "/api/admin/projects/default/environments/production/change-requests/config", h.AdminToken,
			map[string]any{"changeRequestsEnabled": true, "requiredApprovals": 1}).Want(t, 204)
		h.Do(t, "POST", "/api/admin/projects/default/features", h.AdminToken, map[string]any{"name": "checkout"}).Want(t, 201)

		alice := newUIBrowser(t)
		alice.signIn(h.URL, "alice", "alice-password")
		alice.open(h.URL + "/projects/default/flags/checkout")
		if got := eval[string](alice, `document.querySelector("#env-production header").innerText`); !strings.Contains(got, "Review required") {
			t.Fatalf("production's header reads %q, want Review required", got)
		}
		alice.do("switch production on", chromedp.Click(`#env-production input[data-switch]`))
		alice.waitFor("the draft banner", `document.readyState === "complete" && !!document.querySelector("#draft-production")`)
		alice.screenshot("40-change-request-draft")
		if on := eval[bool](alice, `document.querySelector("#env-production input[data-switch]").checked`); on {
			t.Error("the switch shows production on although the change is only drafted")
		}
		if sdkSees(t, h, "checkout") {
			t.Fatal("SDKs see the drafted change")
		}

		// The request page: a sentence per change; Alice sends it and cannot approve it.
		alice.do("open the draft", chromedp.Click(`#draft-production a`))
		alice.waitFor("the request page", `document.readyState === "complete" && !!document.querySelector("#cr-state")`)
		if got := eval[string](alice, `document.querySelector(".cr-sentence").innerText`); got != "Turn flag checkout on in production" {
			t.Errorf("the change reads %q", got)
		}
		if got := eval[string](alice, `document.querySelector(".cr-change pre.diff").innerText.trim()`); got != "enabled: false → true" {
			t.Errorf("the change's diff reads %q", got)
		}
		requestURL := eval[string](alice, `location.href`)
		alice.do("send it to review", chromedp.Click(`#cr-send`))
		alice.waitFor("In review", `document.readyState === "complete" && document.querySelector("#cr-state").innerText === "In review"`)
		if n := eval[int](alice, `document.querySelectorAll("#cr-approve").length`); n != 0 {
			t.Fatal("the author is offered to approve her own request")
		}
		if got := eval[string](alice, `document.querySelector("#review-h").parentElement.innerText`); !strings.Contains(got, "you cannot approve your own request") {
			t.Errorf("the review section reads %q", got)
		}
		// Forcing it from her page is refused by the API.
		forced := eval[string](alice, fmt.Sprintf(`fetch(%q, {method: "PUT", headers: {"Content-Type": "application/json", "X-CSRF-Token": document.querySelector('meta[name="csrf-token"]').content},
			body: JSON.stringify({state: "Approved"})}).then(r => r.status + " " + r.statusText)`, strings.Replace(requestURL, "/projects/", "/api/admin/projects/", 1)+"/state"))
		if !strings.HasPrefix(forced, "403") {
			t.Errorf("the author forcing an approval got %s", forced)
		}

		// Bob finds it among the open requests and approves it.
		bob := newUIBrowser(t)
		bob.signIn(h.URL, "bob", "bob-password")
		bob.open(h.URL + "/change-requests")
		bob.do("open the request", chromedp.Click(`#change-requests tbody a`))
		bob.waitFor("the request page", `document.readyState === "complete" && !!document.querySelector("#cr-approve")`)
		bob.do("approve", chromedp.Click(`#cr-approve`))
		bob.waitFor("Approved", `document.readyState === "complete" && document.querySelector("#cr-state").innerText === "Approved"`)
		bob.screenshot("41-change-request-approved")
		if sdkSees(t, h, "checkout") {
			t.Fatal("SDKs see the change before it is applied")
		}

		// Alice applies it.
		alice.open(requestURL)
		alice.answerConfirm(true)
		alice.do("apply", chromedp.Click(`#cr-apply`))
		alice.waitFor("Applied", `document.readyState === "complete" && document.querySelector("#cr-state").innerText === "Applied"`)
		waitAPI(t, "SDKs see the applied change", func() bool { return sdkSees(t, h, "checkout") })

		// A second change, scheduled a few seconds ahead, applies itself.
		alice.open(h.URL + "/projects/default/flags/checkout")
		alice.do("switch production off", chromedp.Click(`#env-production input[data-switch]`))
		alice.waitFor("the new draft", `document.readyState === "complete" && !!document.querySelector("#draft-production")`)
		alice.do("open the draft", chromedp.Click(`#draft-production a`))
		alice.waitFor("the request page", `document.readyState === "complete" && !!document.querySelector("#cr-send")`)
		second := eval[string](alice, `location.href`)
		alice.do("send it to review", chromedp.Click(`#cr-send`))
		alice.waitFor("In review", `document.readyState === "complete" && document.querySelector("#cr-state").innerText === "In review"`)
		bob.open(second)
		bob.do("approve", chromedp.Click(`#cr-approve`))
		bob.waitFor("Approved", `document.readyState === "complete" && document.querySelector("#cr-state").innerText === "Approved"`)
		alice.open(second)
		at := time.Now().Add(4 * time.Second)
		local := eval[string](alice, fmt.Sprintf(`(() => { const d = new Date(%d); const p = (n) => String(n).padStart(2, "0");
			return d.getFullYear() + "-" + p(d.getMonth() + 1) + "-" + p(d.getDate()) + "T" + p(d.getHours()) + ":" + p(d.getMinutes()) + ":" + p(d.getSeconds()) })()`, at.UnixMilli()))
		alice.set(`#cr-schedule-form input[name="scheduledAt"]`, local)
		alice.do("schedule", chromedp.Click(`#cr-schedule-form button[type="submit"]`))
		alice.waitFor("Scheduled", `document.readyState === "complete" && document.querySelector("#cr-state").innerText === "Scheduled" && !!document.querySelector("#cr-schedule")`)
		alice.screenshot("42-change-request-scheduled")
		if !sdkSees(t, h, "checkout") {
			t.Fatal("the scheduled change applied before its time")
		}
		waitAPI(t, "the scheduled change applies itself", func() bool { return !sdkSees(t, h, "checkout") })

		// The event log tells each request's life.
		alice.open(h.URL + "/events")
		log := eval[string](alice, `[...document.querySelectorAll(".etype")].map(e => e.innerText).reverse().join(" ")`)
		for _, want := range []string{"change-request-configuration-updated", "change-request-created", "change-added", "change-request-sent-to-review",
			"change-request-approval-added", "change-request-approved", "feature-environment-enabled", "change-request-applied",
			"change-request-scheduled", "feature-environment-disabled", "change-request-scheduled-application-success"} {
			if !strings.Contains(log, want) {
				t.Errorf("the event log lacks %s: %s", want, log)
			}
		}
		if i, j := strings.Index(log, "change-request-approved"), strings.Index(log, "feature-environment-enabled"); i < 0 || j < i {
			t.Errorf("the flag was switched before the approval: %s", log)
		}
	})
}
