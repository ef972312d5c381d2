package server_test

import (
	"math/rand/v2"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestStreamingResumesWithoutLossUnderConcurrentWrites: writers switch
// flags concurrently while a reader keeps dropping its stream and resuming
// with Last-Event-ID. The ids it sees only rise (nothing twice), and the
// state it rebuilds from the events alone ends equal to
// /api/client/features (nothing lost).
func TestStreamingResumesWithoutLossUnderConcurrentWrites(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		const flags = 6
		for i := range flags {
			createFlag(t, h, "c-"+strconv.Itoa(i))
			h.Do(t, "POST", envPath("c-"+strconv.Itoa(i), "development")+"/strategies", h.AdminToken, map[string]any{"name": "default"}).Want(t, 200)
		}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(w), 7))
				for i := 0; i < 25; i++ {
					name := "c-" + strconv.Itoa(rng.IntN(flags))
					if res := h.Do(t, "POST", envPath(name, "development")+[]string{"/on", "/off"}[rng.IntN(2)], h.AdminToken, nil); res.Status != 200 {
						t.Errorf("toggle %s: %s", name, res)
					}
				}
			}()
		}
		go func() { wg.Wait(); close(stop) }()

		state := map[string]bool{}
		var last int64
		apply := func(ev sseEvent) {
			if ev.ID <= last && ev.Name != "unleash-connected" {
				t.Fatalf("event id %d after %d", ev.ID, last)
			}
			last = ev.ID
			for _, e := range ev.Data.Events {
				switch e["type"] {
				case "hydration":
					clear(state)
					for _, f := range e["features"].([]any) {
						m := f.(map[string]any)
						state[m["name"].(string)] = m["enabled"].(bool)
					}
				case "feature-updated":
					m := e["feature"].(map[string]any)
					state[m["name"].(string)] = m["enabled"].(bool)
				case "feature-removed":
					delete(state, e["featureName"].(string))
				}
			}
		}
		hydrations := 0
		for done := false; !done; {
			select {
			case <-stop:
				done = true
			default:
			}
			var st *sseStream
			if last == 0 {
				st = openStream(t, h, "/api/client/streaming", h.ClientToken)
			} else {
				st = openStream(t, h, "/api/client/streaming", h.ClientToken, "Last-Event-ID", strconv.FormatInt(last, 10))
			}
			deadline := time.After(50 * time.Millisecond)
		read:
			for {
				select {
				case ev, ok := <-st.events:
					if !ok {
						break read
					}
					if ev.Name == "unleash-connected" {
						hydrations++
					}
					apply(ev)
				case <-deadline:
					break read
				}
			}
			st.close()
		}
		// Catch up once more after the last write.
		st := openStream(t, h, "/api/client/streaming", h.ClientToken, "Last-Event-ID", strconv.FormatInt(last, 10))
		timeout := time.After(500 * time.Millisecond)
	catchUp:
		for {
			select {
			case ev := <-st.events:
				apply(ev)
			case <-timeout:
				break catchUp
			}
		}
		var features struct {
			Features []struct {
				Name    string
				Enabled bool
			}
		}
		h.Do(t, "GET", "/api/client/features", h.ClientToken, nil).Want(t, 200).JSON(t, &features)
		want := map[string]bool{}
		for _, f := range features.Features {
			want[f.Name] = f.Enabled
		}
		if len(want) != len(state) {
			t.Fatalf("rebuilt %v, served %v", state, want)
		}
		for name, on := range want {
			if state[name] != on {
				t.Fatalf("%s: rebuilt %v, served %v (rebuilt %v)", name, state[name], on, state)
			}
		}
		t.Logf("%d hydrations (more than one when a reconnect fell out of the history)", hydrations)
	})
}
