package server_test

import (
	"encoding/json"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// The flag an on/off call returns is read with a fixed number of queries
// (strategies joined with their segment links, dependencies and children
// in one query); it must still show every link, in order.
func TestToggleReturnsTheWholeFlag(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		c := []map[string]any{{"contextName": "userId", "operator": "IN", "values": []string{"1"}}}
		var seg1, seg2 struct{ ID int }
		h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "tv1", "constraints": c}).Want(t, 201).JSON(t, &seg1)
		h.Do(t, "POST", "/api/admin/segments", h.AdminToken, map[string]any{"name": "tv2", "constraints": c}).Want(t, 201).JSON(t, &seg2)
		for _, name := range []string{"tv-parent", "tv-child"} {
			h.Do(t, "POST", featuresURL, h.AdminToken, map[string]any{"name": name}).Want(t, 201)
		}
		strategies := envPath("tv-parent", "development") + "/strategies"
		h.Do(t, "POST", strategies, h.AdminToken, map[string]any{"name": "default", "segments": []int{seg2.ID, seg1.ID}}).Want(t, 200)
		h.Do(t, "POST", strategies, h.AdminToken, map[string]any{"name": "default"}).Want(t, 200)
		h.Do(t, "POST", featurePath("tv-child")+"/dependencies", h.AdminToken, map[string]any{"feature": "tv-parent", "enabled": true}).Want(t, 200)

		type view struct {
			Enabled      bool
			Children     []string
			Dependencies []struct {
				Feature string
				Enabled bool
			}
			Environments []struct {
				Name       string
				Type       string
				Enabled    bool
				Strategies []struct{ Segments []int }
			}
		}
		var parent view
		h.Do(t, "POST", envPath("tv-parent", "development")+"/on", h.AdminToken, nil).Want(t, 200).JSON(t, &parent)
		dev := parent.Environments[0]
		for _, e := range parent.Environments {
			if e.Name == "development" {
				dev = e
			}
		}
		got, _ := json.Marshal(parent)
		lo, hi := min(seg1.ID, seg2.ID), max(seg1.ID, seg2.ID)
		if !parent.Enabled || !dev.Enabled || dev.Type != "development" || len(dev.Strategies) != 2 ||
			len(dev.Strategies[0].Segments) != 2 || dev.Strategies[0].Segments[0] != lo || dev.Strategies[0].Segments[1] != hi ||
			len(dev.Strategies[1].Segments) != 0 || len(parent.Children) != 1 || parent.Children[0] != "tv-child" ||
			len(parent.Dependencies) != 0 {
			t.Fatalf("parent after on (no default strategy may be added, segments in order, one child): %s", got)
		}
		var child view
		h.Do(t, "POST", envPath("tv-child", "development")+"/off", h.AdminToken, nil).Want(t, 200).JSON(t, &child)
		got, _ = json.Marshal(child)
		if child.Enabled || len(child.Children) != 0 || len(child.Dependencies) != 1 ||
			child.Dependencies[0].Feature != "tv-parent" || !child.Dependencies[0].Enabled {
			t.Fatalf("child after off: %s", got)
		}
		// The same view as a plain read.
		var read view
		h.Do(t, "GET", featurePath("tv-parent"), h.AdminToken, nil).Want(t, 200).JSON(t, &read)
		if a, b := string(mustJSON(t, read)), string(mustJSON(t, parent)); a != b {
			t.Fatalf("read %s, toggle returned %s", a, b)
		}
	})
}
