package integrations_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/integrations"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// A change reaches a webhook signed with Standard Webhooks headers that
// the published verifier accepts; the generated secret is shown once, and
// every other answer, the stored row and the logs show it masked.
func TestWebhookSignedDelivery(t *testing.T) {
	v := newVerifier(t)
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		rc := newReceiver(t, nil)
		created := createAddon(t, h, webhook(rc.URL+"/hook?token=s3cr3t-in-url", map[string]any{"authorization": "Bearer receiver-secret"}, "feature-created", "feature-environment-enabled", "feature-environment-disabled"))
		params := created["parameters"].(map[string]any)
		secret, _ := params["signingSecret"].(string)
		if !strings.HasPrefix(secret, "whsec_") {
			t.Fatalf("a generated signing secret is shown once on creation; got parameters %v", params)
		}
		if params["url"] != integrations.Masked || params["authorization"] != integrations.Masked {
			t.Fatalf("sensitive parameters are masked: %v", params)
		}
		id := created["id"]

		createFlag(t, h, "default", "new-checkout")
		toggle(t, h, "default", "new-checkout", "production", true)

		hits := rc.waitHits(t, 2, 10*time.Second) // feature-created, then enabled
		var enabled hit
		for _, ht := range hits {
			var ev map[string]any
			if err := json.Unmarshal(ht.Body, &ev); err != nil {
				t.Fatal(err)
			}
			if ev["type"] == "feature-environment-enabled" {
				enabled = ht
				if ev["featureName"] != "new-checkout" || ev["environment"] != "production" || ev["createdBy"] == "" {
					t.Fatalf("event: %s", ht.Body)
				}
			}
			if got := v.verify(t, secret, ht); got != "" {
				t.Fatalf("the standardwebhooks library refuses the delivery: %s (headers %v)", got, ht.Header)
			}
			if ht.Header.Get("Authorization") != "Bearer receiver-secret" || ht.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("headers: %v", ht.Header)
			}
		}
		if enabled.Body == nil {
			t.Fatalf("no feature-environment-enabled delivery among %d", len(hits))
		}
		// A wrong secret or a changed body is refused by the same library.
		if v.verify(t, "whsec_"+strings.Repeat("QUJD", 8), enabled) == "" {
			t.Fatal("the verifier accepted a wrong secret")
		}
		tampered := enabled
		tampered.Body = append([]byte(nil), enabled.Body...)
		tampered.Body[len(tampered.Body)-2] ^= 1
		if v.verify(t, secret, tampered) == "" {
			t.Fatal("the verifier accepted a changed body")
		}

		got := h.Do(t, "GET", "/api/admin/addons/"+jsonID(id), h.AdminToken, nil).Want(t, 200)
		for _, leak := range []string{secret, "s3cr3t-in-url", "receiver-secret"} {
			if strings.Contains(got.String(), leak) {
				t.Fatalf("GET shows a secret (%s): %s", leak, got)
			}
			list := h.Do(t, "GET", "/api/admin/addons", h.AdminToken, nil).Want(t, 200)
			if strings.Contains(list.String(), leak) {
				t.Fatalf("the list shows a secret (%s)", leak)
			}
			logs := h.Do(t, "GET", "/api/admin/addons/"+jsonID(id)+"/events", h.AdminToken, nil).Want(t, 200)
			if strings.Contains(logs.String(), leak) {
				t.Fatalf("the delivery log shows a secret (%s): %s", leak, logs)
			}
			if strings.Contains(h.Logs(), leak) {
				t.Fatalf("the server log shows a secret (%s)", leak)
			}
			var stored string
			if err := h.Store.DB().QueryRowContext(context.Background(), `SELECT parameters || secrets FROM integrations`).Scan(&stored); err != nil {
				t.Fatal(err)
			}
			if strings.Contains(stored, leak) {
				t.Fatalf("the database holds a secret in clear (%s)", leak)
			}
		}
		log := addonLog(t, h, id)
		if len(log) < 2 || log[0]["state"] != "success" {
			t.Fatalf("delivery log: %v", log)
		}
		details := log[0]["details"].(map[string]any)
		if details["target"] != rc.URL || details["statusCode"] != float64(200) || !strings.HasPrefix(details["deliveryId"].(string), "msg_") {
			t.Fatalf("log details: %v", details)
		}
		if ev := log[0]["event"].(map[string]any); ev["type"] != "feature-environment-enabled" {
			t.Fatalf("the newest log row is about %v", ev["type"])
		}

		// An update that sends the masked values back keeps the secrets:
		// deliveries still verify with the first secret.
		upd := map[string]any{"provider": "webhook", "enabled": true, "description": "renamed", "events": []string{},
			"parameters": map[string]any{"url": integrations.Masked, "authorization": integrations.Masked, "signingSecret": integrations.Masked}}
		h.Do(t, "PUT", "/api/admin/addons/"+jsonID(id), h.AdminToken, upd).Want(t, 200)
		toggle(t, h, "default", "new-checkout", "production", false)
		hits = rc.waitHits(t, 3, 10*time.Second)
		if got := v.verify(t, secret, hits[len(hits)-1]); got != "" {
			t.Fatalf("after an update with masked values: %s", got)
		}
		if hits[len(hits)-1].Header.Get("Authorization") != "Bearer receiver-secret" {
			t.Fatal("the masked authorization was not kept")
		}
	}, allowLoopback)
}

func jsonID(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
