package webui

import (
	"encoding/json"
	"fmt"
	"net/url"
)

// strategyMove is what the move-up and move-down buttons of one strategy
// send: the environment's whole new order, as set-sort-order takes it
// (empty when the strategy cannot move that way).
type strategyMove struct {
	ID       string // the strategy's id
	API      string // its environment's strategies URL
	Label    string // the strategy as the buttons name it
	Up, Down string // JSON bodies for set-sort-order
}

// strategyMoves computes, for every strategy of a flag (by id), the order
// its environment would have with that strategy one place up or down.
// The flag is the admin API's answer (strategies in served order) and api
// its URL as the browser calls it.
func strategyMoves(flag map[string]any, api string) map[string]strategyMove {
	out := map[string]strategyMove{}
	envs, _ := flag["environments"].([]any)
	for _, e := range envs {
		env, _ := e.(map[string]any)
		list, _ := env["strategies"].([]any)
		ids := make([]string, 0, len(list))
		labels := make([]string, 0, len(list))
		for i, st := range list {
			m, _ := st.(map[string]any)
			ids = append(ids, fmt.Sprint(m["id"]))
			label := fmt.Sprintf("%d (%v", i+1, m["name"])
			if t, ok := m["title"].(string); ok && t != "" {
				label += " " + t
			}
			labels = append(labels, label+")")
		}
		for i, id := range ids {
			mv := strategyMove{ID: id, API: api + "/environments/" + url.PathEscape(fmt.Sprint(env["name"])) + "/strategies", Label: labels[i]}
			if i > 0 {
				mv.Up = sortOrderBody(ids, i, i-1)
			}
			if i < len(ids)-1 {
				mv.Down = sortOrderBody(ids, i, i+1)
			}
			out[id] = mv
		}
	}
	return out
}

// sortOrderBody is the set-sort-order body for ids with positions i and j
// swapped.
func sortOrderBody(ids []string, i, j int) string {
	order := append([]string(nil), ids...)
	order[i], order[j] = order[j], order[i]
	type item struct {
		ID        string `json:"id"`
		SortOrder int    `json:"sortOrder"`
	}
	items := make([]item, len(order))
	for k, id := range order {
		items[k] = item{ID: id, SortOrder: k}
	}
	b, _ := json.Marshal(items)
	return string(b)
}
