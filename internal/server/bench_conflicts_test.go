package server_test

import (
	"context"
	"strconv"
	"testing"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// BenchmarkFlagVersion measures what versions cost, side by side with
// their baselines in one run: reading a flag's view (3 environments, 12
// strategies with constraints, 5 tags) without and with its version (the
// ETag of GET), and switching a flag over HTTP without and with If-Match
// (the conditional change locks the flag and computes the version before
// and after the change, in its transaction).
func BenchmarkFlagVersion(b *testing.B) {
	benchDatabases(b, func(b *testing.B, h *servertest.Harness) {
		h.Do(b, "POST", featuresURL, h.AdminToken, map[string]any{"name": "big"}).Want(b, 201)
		for i := range 12 {
			env := []string{"development", "production"}[i%2]
			h.Do(b, "POST", envPath("big", env)+"/strategies", h.AdminToken, map[string]any{"name": "flexibleRollout",
				"parameters":  map[string]any{"rollout": strconv.Itoa(i)},
				"constraints": []any{map[string]any{"contextName": "userId", "operator": "IN", "values": []string{"a", "b", "c"}}}}).Want(b, 200)
		}
		for i := range 5 {
			h.Do(b, "POST", "/api/admin/features/big/tags", h.AdminToken, map[string]any{"type": "simple", "value": "t" + strconv.Itoa(i)}).Want(b, 201)
		}
		q := h.Store.Q(context.Background())
		f, err := q.Feature("big")
		if err != nil {
			b.Fatal(err)
		}
		b.Run("view", func(b *testing.B) {
			for b.Loop() {
				if _, err := domain.LoadFeatureView(q, f); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("view+version", func(b *testing.B) {
			for b.Loop() {
				v, err := domain.LoadFeatureView(q, f)
				if err != nil {
					b.Fatal(err)
				}
				if _, err := domain.FeatureVersion(q, v); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, conditional := range []bool{false, true} {
			name := map[bool]string{false: "switch", true: "switch+If-Match"}[conditional]
			flag := "w" + strconv.FormatBool(conditional)
			h.Do(b, "POST", featuresURL, h.AdminToken, map[string]any{"name": flag}).Want(b, 201)
			h.Do(b, "POST", envPath(flag, "development")+"/strategies", h.AdminToken, map[string]any{"name": "default"}).Want(b, 200)
			b.Run(name, func(b *testing.B) {
				etag, on := "", false
				for b.Loop() {
					on = !on
					var headers []string
					if conditional {
						headers = []string{"If-Match", etag}
						if etag == "" {
							headers[1] = "*"
						}
					}
					res := h.Do(b, "POST", envPath(flag, "development")+map[bool]string{true: "/on", false: "/off"}[on], h.AdminToken, nil, headers...)
					if res.Status != 200 {
						b.Fatalf("switch: %s", res)
					}
					etag = res.Header.Get("ETag")
				}
			})
		}
	})
}
