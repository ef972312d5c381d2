package webui

import (
	"errors"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/server/adminapi"
)

// The playground page: a form (a plain GET, so a run has a URL to share)
// whose answer comes from POST /api/admin/playground, called in process as
// the visitor. The page only arranges what the API says.

// pgBuiltins are the context fields with their own inputs, in order.
var pgBuiltins = []struct{ Name, Label, Hint string }{
	{"appName", "App name", "e.g. web"},
	{"userId", "User ID", "e.g. user-42"},
	{"sessionId", "Session ID", ""},
	{"remoteAddress", "Remote address", "e.g. 10.0.0.1"},
	{"currentTime", "Current time (UTC)", "empty: now"},
}

// pgFreeProperties is how many free name/value rows the form offers.
const pgFreeProperties = 3

// pgStrategy and pgFeature are the API's answer (adminapi.Playground*)
// with what the page adds: each strategy's number, whether it turned the
// flag on and a few words on what it did; the flag's one-line reason.
type pgStrategy struct {
	adminapi.PlaygroundStrategy
	// Position is the strategy's number, from 1; Winner marks the one
	// that turned the flag on.
	Position int
	Winner   bool
	// Why is the strategy's outcome in a few words; Matches says whether
	// it would say yes.
	Why     string
	Matches bool
}

type pgFeature struct {
	adminapi.PlaygroundFeature
	// Strategies are the flag's strategies as the page shows them.
	Strategies []pgStrategy
	// Why is the one-line reason.
	Why string
}

// pgProperty is one custom context field input.
type pgProperty struct {
	Name, Value string
	Known       bool
	Legal       []string
}

func (h *Handler) playground(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	var envs struct {
		Environments []struct {
			Name    string `json:"name"`
			Enabled bool   `json:"enabled"`
		} `json:"environments"`
	}
	var projects struct {
		Projects []named `json:"projects"`
	}
	var fields []struct {
		Name        string `json:"name"`
		LegalValues []struct {
			Value string `json:"value"`
		} `json:"legalValues"`
	}
	for _, c := range []struct {
		path string
		out  any
	}{{"/api/admin/environments", &envs}, {"/api/admin/projects", &projects}, {"/api/admin/context", &fields}} {
		if err := h.call(r, s, "GET", c.path, nil, c.out); err != nil {
			h.fail(w, r, s, err)
			return
		}
	}
	// The context from the query: built-ins, known custom fields, then
	// free name/value pairs.
	ctx := map[string]any{}
	builtin := map[string]bool{"environment": true}
	for _, b := range pgBuiltins {
		builtin[b.Name] = true
		if v := strings.TrimSpace(q.Get(b.Name)); v != "" {
			ctx[b.Name] = v
		}
	}
	if t, ok := ctx["currentTime"].(string); ok && len(t) == len("2006-01-02T15:04") {
		ctx["currentTime"] = t + ":00Z" // what a datetime-local input sends
	}
	props := map[string]string{}
	var known []pgProperty
	for _, f := range fields {
		if builtin[f.Name] {
			continue
		}
		p := pgProperty{Name: f.Name, Value: q.Get("p." + f.Name), Known: true}
		for _, lv := range f.LegalValues {
			p.Legal = append(p.Legal, lv.Value)
		}
		known = append(known, p)
		if p.Value != "" {
			props[f.Name] = p.Value
		}
	}
	free := make([]pgProperty, pgFreeProperties)
	names, values := q["pn"], q["pv"]
	for i := range free {
		if i < len(names) && i < len(values) {
			free[i] = pgProperty{Name: strings.TrimSpace(names[i]), Value: values[i]}
			if free[i].Name != "" {
				props[free[i].Name] = free[i].Value
			}
		}
	}
	if len(props) > 0 {
		ctx["properties"] = props
	}

	env := q.Get("environment")
	if env == "" && len(envs.Environments) > 0 {
		env = envs.Environments[0].Name
		for _, e := range envs.Environments {
			if e.Name == "development" {
				env = e.Name
			}
		}
	}
	chosen := q["project"]
	data := map[string]any{
		"Builtins": pgBuiltins, "Known": known, "Free": free, "Environments": envs.Environments, "Environment": env,
		"Projects": projects.Projects, "Chosen": chosen, "Show": q.Get("show"), "Ran": q.Get("environment") != "",
		"ChangeRequest": q.Get("changeRequest"),
	}
	if q.Get("environment") != "" {
		body := map[string]any{"environment": env, "projects": "*", "context": ctx}
		if len(chosen) > 0 {
			body["projects"] = chosen
		}
		if cr, err := strconv.ParseInt(q.Get("changeRequest"), 10, 64); err == nil {
			body["changeRequest"] = cr
		}
		var answer adminapi.PlaygroundResponse
		err := h.call(r, s, "POST", "/api/admin/playground", body, &answer)
		var ae *apiError
		switch {
		case errors.As(err, &ae) && ae.Status == http.StatusBadRequest:
			data["Error"] = ae.Message
		case err != nil:
			h.fail(w, r, s, err)
			return
		default:
			pgArrange(data, answer.Features, q.Get("show"))
		}
	}
	h.render(w, r, "playground", page{Title: "Playground", Nav: "playground", Session: s, Data: data})
}

// pgArrange adds the flags to show (all, on or off), each with its reason
// and numbered strategies, and the counts.
func pgArrange(data map[string]any, features []adminapi.PlaygroundFeature, show string) {
	on := 0
	var shown []pgFeature
	for _, af := range features {
		if af.IsEnabled {
			on++
		}
		if show == "on" && !af.IsEnabled || show == "off" && af.IsEnabled {
			continue
		}
		f := pgFeature{PlaygroundFeature: af}
		winner := false
		for i, as := range af.Strategies.Data {
			st := pgStrategy{PlaygroundStrategy: as, Position: i + 1}
			if f.IsEnabled && !winner && !st.Disabled && st.Result.Enabled == true {
				st.Winner, winner = true, true
			}
			pgStrategyWhy(&st, f.IsEnabled)
			f.Strategies = append(f.Strategies, st)
		}
		f.Why = pgWhy(&f)
		shown = append(shown, f)
	}
	sort.SliceStable(shown, func(i, j int) bool { return shown[i].IsEnabled && !shown[j].IsEnabled })
	data["Features"], data["Total"], data["On"], data["Off"] = shown, len(features), on, len(features)-on
}

// pgWhy is a flag's outcome in one sentence.
func pgWhy(f *pgFeature) string {
	if !f.IsEnabledInCurrentEnvironment {
		return "Off: the flag is turned off in this environment."
	}
	for _, d := range f.Dependencies {
		if !d.Result {
			want := "on"
			if !d.Enabled {
				want = "off"
			}
			return "Off: it depends on " + d.Feature + " being " + want + "."
		}
	}
	if len(f.Strategies) == 0 {
		return "On: the flag is on and has no strategies, so everyone gets it."
	}
	for _, st := range f.Strategies {
		if st.Winner {
			return "On: strategy " + strconv.Itoa(st.Position) + " (" + pgStrategyName(st) + ") matched."
		}
	}
	if f.PlaygroundFeature.Strategies.Result == "unknown" {
		return "Off: no strategy matched here, and a strategy Bunting does not know may have (SDKs with that strategy decide)."
	}
	return "Off: no enabled strategy matched this context."
}

// pgStrategyName names a strategy as the flag page does: its title, else
// its kind in words ("Gradual rollout").
func pgStrategyName(st pgStrategy) string {
	if st.Title != nil && *st.Title != "" {
		return *st.Title
	}
	return describeStrategy(map[string]any{"name": st.Name}, nil).Kind
}

// pgStrategyWhy says in a few words what one strategy did.
func pgStrategyWhy(st *pgStrategy, flagOn bool) {
	failed := false
	for _, c := range st.Constraints {
		failed = failed || !c.Result
	}
	for _, sg := range st.Segments {
		failed = failed || !sg.Result
	}
	st.Matches = st.Result.Enabled == true
	switch {
	case st.Winner:
		st.Why = "matched: this strategy turned the flag on"
	case st.Result.Enabled == "unknown":
		st.Why = "its constraints hold, but Bunting does not know this strategy: SDKs that implement it decide"
	case st.Matches && st.Disabled:
		st.Why = "would match, but it is disabled"
	case st.Matches && flagOn:
		st.Why = "matches too, but an earlier strategy decided"
	case st.Matches:
		st.Why = "matches, but the flag is off (see above)"
	case failed:
		st.Why = "did not match: a constraint below fails"
	default:
		st.Why = "did not match: its constraints hold, but the context is outside the rollout, user list or addresses"
	}
}
