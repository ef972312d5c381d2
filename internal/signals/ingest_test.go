package signals_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

func TestIngestionStatusCodes(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		id, token := endpoint(t, h, "alerts")
		_, otherToken := endpoint(t, h, "other")

		signal(t, h, "nope", token, nil).WantError(t, 404, "NotFoundError", "nope")
		h.Do(t, "POST", "/api/signal-endpoint/alerts", "", nil).WantError(t, 401, "AuthenticationRequired")
		h.Do(t, "POST", "/api/signal-endpoint/alerts", "Bearer ", nil).WantError(t, 401, "AuthenticationRequired")
		signal(t, h, "alerts", "wrong", nil).WantError(t, 401, "AuthenticationRequired")
		signal(t, h, "alerts", otherToken, nil).WantError(t, 401, "AuthenticationRequired")
		signal(t, h, "alerts", h.AdminToken, nil).WantError(t, 401, "AuthenticationRequired")

		big := `{"x":"` + strings.Repeat("a", 100*1024) + `"}`
		signal(t, h, "alerts", token, big).WantError(t, 413, "ContentTooLargeError")
		signal(t, h, "alerts", token, "not json").WantError(t, 400, "ValidationError", "JSON")
		signal(t, h, "alerts", token, `{"unclosed":`).WantError(t, 400, "ValidationError")

		res := signal(t, h, "alerts", token, nil).Want(t, 200)
		var body struct {
			Signals []struct {
				ID                     int64
				Source                 string
				SourceID               int64
				CreatedBySourceTokenID *int64
				Payload                map[string]any
				CreatedAt              time.Time
			}
		}
		res.JSON(t, &body)
		if len(body.Signals) != 1 || body.Signals[0].ID == 0 || body.Signals[0].Source != "signal-endpoint" ||
			body.Signals[0].SourceID != id || body.Signals[0].CreatedBySourceTokenID == nil || len(body.Signals[0].Payload) != 0 {
			t.Fatalf("ingestion response: %s", res.Body)
		}
		h.Do(t, "POST", "/api/signal-endpoint/alerts", token, `{"alert":"disk","value":3,"nested":{"a":[1,2]}}`).Want(t, 200)
		signal(t, h, "alerts", token, `["any", "json"]`).Want(t, 200)
		h.Do(t, "POST", "/api/signal-endpoint/alerts", "bearer "+token, `"text"`, "Content-Type", "text/plain").Want(t, 200)

		var log struct{ SignalEndpointSignals []map[string]any }
		h.Do(t, "GET", fmt.Sprintf("/api/admin/signal-endpoints/%d/signals", id), h.AdminToken, nil).Want(t, 200).JSON(t, &log)
		if len(log.SignalEndpointSignals) != 4 {
			t.Fatalf("signal log: %+v", log)
		}
		second := log.SignalEndpointSignals[2]
		nested, _ := json.Marshal(second["payload"])
		if second["tokenName"] != "alerts-token" || !strings.Contains(string(nested), `"nested":{"a":[1,2]}`) || second["createdAt"] == nil {
			t.Fatalf("stored signal: %+v", second)
		}

		h.Do(t, "POST", fmt.Sprintf("/api/admin/signal-endpoints/%d/off", id), h.AdminToken, nil).Want(t, 200)
		signal(t, h, "alerts", token, nil).WantError(t, 404, "NotFoundError")
		h.Do(t, "POST", fmt.Sprintf("/api/admin/signal-endpoints/%d/on", id), h.AdminToken, nil).Want(t, 200)
		signal(t, h, "alerts", token, nil).Want(t, 200)
	}, fastRate)
}

// TestRateLimitUnderBurst fires many signals at once from many goroutines:
// an endpoint accepts at most the configured number per second window, the
// rest get 429 with Retry-After, and only accepted signals are stored.
func TestRateLimitUnderBurst(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		id, token := endpoint(t, h, "alerts")
		_, otherToken := endpoint(t, h, "other")
		const senders = 40
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			accepted int
			limited  int
		)
		start := time.Now()
		for range senders {
			wg.Add(1)
			go func() {
				defer wg.Done()
				req, _ := http.NewRequest("POST", h.URL+"/api/signal-endpoint/alerts", strings.NewReader(`{"burst":true}`))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				res, err := h.Client.Do(req)
				if err != nil {
					t.Error(err)
					return
				}
				res.Body.Close()
				mu.Lock()
				defer mu.Unlock()
				switch res.StatusCode {
				case 200:
					accepted++
				case 429:
					limited++
					if res.Header.Get("Retry-After") != "1" {
						t.Errorf("Retry-After %q", res.Header.Get("Retry-After"))
					}
				default:
					t.Errorf("status %d", res.StatusCode)
				}
			}()
		}
		wg.Wait()
		windows := int(time.Since(start)/time.Second) + 2 // seconds the burst may have touched
		if accepted < 1 || accepted > windows || accepted+limited != senders {
			t.Fatalf("accepted %d, limited %d over at most %d one-second windows", accepted, limited, windows)
		}
		var log struct{ SignalEndpointSignals []any }
		h.Do(t, "GET", fmt.Sprintf("/api/admin/signal-endpoints/%d/signals", id), h.AdminToken, nil).Want(t, 200).JSON(t, &log)
		if len(log.SignalEndpointSignals) != accepted {
			t.Fatalf("%d signals stored, %d accepted", len(log.SignalEndpointSignals), accepted)
		}
		// The limit is per endpoint: another endpoint still accepts.
		signal(t, h, "other", otherToken, nil).Want(t, 200)
		// And the endpoint accepts again in the next window.
		time.Sleep(time.Until(time.Now().Truncate(time.Second).Add(time.Second + 50*time.Millisecond)))
		window := time.Now().Truncate(time.Second)
		signal(t, h, "alerts", token, nil).Want(t, 200)
		second := signal(t, h, "alerts", token, nil)
		if time.Now().Truncate(time.Second).Equal(window) {
			second.WantError(t, 429, "RateLimitError")
		}
	})
}

func TestSignalLog(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		a, tokenA := endpoint(t, h, "a")
		_, tokenB := endpoint(t, h, "b")
		for i := range 5 {
			signal(t, h, "a", tokenA, map[string]any{"n": i}).Want(t, 200)
		}
		signal(t, h, "b", tokenB, map[string]any{"n": 99}).Want(t, 200)

		var page struct {
			SignalEndpointSignals []struct {
				ID      int64
				Payload struct{ N int }
			}
		}
		h.Do(t, "GET", fmt.Sprintf("/api/admin/signal-endpoints/%d/signals?limit=2&offset=1", a), h.AdminToken, nil).Want(t, 200).JSON(t, &page)
		if len(page.SignalEndpointSignals) != 2 || page.SignalEndpointSignals[0].Payload.N != 3 || page.SignalEndpointSignals[1].Payload.N != 2 {
			t.Fatalf("page: %+v", page)
		}
		var all struct {
			Signals []struct {
				Payload    struct{ N int }
				SourceName string
				TokenName  string
			}
			Total int
		}
		h.Do(t, "GET", "/api/admin/signals", h.AdminToken, nil).Want(t, 200).JSON(t, &all)
		if all.Total != 6 || len(all.Signals) != 6 || all.Signals[0].Payload.N != 99 || all.Signals[0].SourceName != "b" ||
			all.Signals[5].Payload.N != 0 || all.Signals[5].TokenName != "a-token" {
			t.Fatalf("all signals: %+v", all)
		}
		today := time.Now().UTC().Format(time.DateOnly)
		yesterday := time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly)
		h.Do(t, "GET", "/api/admin/signals?from=IS:"+today+"&to=IS:"+today+"&limit=4", h.AdminToken, nil).Want(t, 200).JSON(t, &all)
		if all.Total != 6 || len(all.Signals) != 4 {
			t.Fatalf("today: total %d, %d signals", all.Total, len(all.Signals))
		}
		h.Do(t, "GET", "/api/admin/signals?to=IS:"+yesterday, h.AdminToken, nil).Want(t, 200).JSON(t, &all)
		if all.Total != 0 || len(all.Signals) != 0 {
			t.Fatalf("before today: %+v", all)
		}
		h.Do(t, "GET", "/api/admin/signals?limit=0", h.AdminToken, nil).WantError(t, 400, "ValidationError", "limit")
		h.Do(t, "GET", "/api/admin/signals?limit=1001", h.AdminToken, nil).WantError(t, 400, "ValidationError", "limit")
		h.Do(t, "GET", "/api/admin/signals?offset=-1", h.AdminToken, nil).WantError(t, 400, "ValidationError", "offset")
		h.Do(t, "GET", "/api/admin/signals?from=yesterday", h.AdminToken, nil).WantError(t, 400, "ValidationError", "from")
		h.Do(t, "GET", "/api/admin/signal-endpoints/999/signals", h.AdminToken, nil).WantError(t, 404, "NotFoundError")
	}, fastRate)
}
