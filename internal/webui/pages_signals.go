package webui

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"time"
)

// The signal screens: signal endpoints with their tokens and latest
// signals (/signals), a project's action sets (/actions) and their runs
// (/actions/runs). Every call needs the ADMIN permission; a visitor
// without it sees the API's refusal and no controls.

func (h *Handler) signalRoutes() {
	h.mux.HandleFunc("GET /signals", h.withSession(h.signalEndpoints))
	h.mux.HandleFunc("GET /actions", h.withSession(h.actionSets))
	h.mux.HandleFunc("GET /actions/runs", h.withSession(h.actionRuns))
}

// signalEndpoint is a signal endpoint as the admin API lists it, with its
// latest signals.
type signalEndpoint struct {
	ID          int64     `json:"id"`
	Name        string    `json:"name"`
	Enabled     bool      `json:"enabled"`
	Description *string   `json:"description"`
	CreatedAt   time.Time `json:"createdAt"`
	Tokens      []struct {
		ID        int64     `json:"id"`
		Name      string    `json:"name"`
		CreatedAt time.Time `json:"createdAt"`
	} `json:"tokens"`
	Signals []receivedSignal `json:"-"`
	URL     string           `json:"-"`
}

// receivedSignal is one signal an endpoint received.
type receivedSignal struct {
	ID        int64           `json:"id"`
	CreatedAt time.Time       `json:"createdAt"`
	TokenName *string         `json:"tokenName"`
	Payload   json.RawMessage `json:"payload"`
}

// failed shows a page's first read's error, if any, and reports whether
// it did: the API's refusal (403) as the page itself with the message
// instead of its content, any other error as an error page.
func (h *Handler) failed(w http.ResponseWriter, r *http.Request, name string, p page, err error) bool {
	var ae *apiError
	switch {
	case err == nil:
		return false
	case errors.As(err, &ae) && ae.Status == http.StatusForbidden:
		p.Data = map[string]any{"Denied": ae.Message}
		h.render(w, r, name, p)
	default:
		h.fail(w, r, p.Session, err)
	}
	return true
}

// listEndpoints reads the signal endpoints.
func (h *Handler) listEndpoints(r *http.Request, s *session) ([]signalEndpoint, error) {
	var list struct {
		SignalEndpoints []signalEndpoint `json:"signalEndpoints"`
	}
	err := h.call(r, s, "GET", "/api/admin/signal-endpoints", nil, &list)
	return list.SignalEndpoints, err
}

func (h *Handler) signalEndpoints(w http.ResponseWriter, r *http.Request, s *session) {
	p := page{Title: "Signal endpoints", Nav: "signals", Session: s}
	endpoints, err := h.listEndpoints(r, s)
	if h.failed(w, r, "signals", p, err) {
		return
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	for i := range endpoints {
		e := &endpoints[i]
		e.URL = scheme + "://" + r.Host + h.base + "/api/signal-endpoint/" + url.PathEscape(e.Name)
		var sigs struct {
			Signals []receivedSignal `json:"signalEndpointSignals"`
		}
		if err := h.call(r, s, "GET", "/api/admin/signal-endpoints/"+strconv.FormatInt(e.ID, 10)+"/signals?limit=5", nil, &sigs); err != nil {
			h.fail(w, r, s, err)
			return
		}
		e.Signals = sigs.Signals
	}
	p.Data = map[string]any{"Endpoints": endpoints}
	h.render(w, r, "signals", p)
}

// actionSet is an action set as the admin API answers it.
type actionSet struct {
	ID          int64   `json:"id"`
	Project     string  `json:"project"`
	Name        string  `json:"name"`
	Description *string `json:"description"`
	Enabled     bool    `json:"enabled"`
	ActorID     int64   `json:"actorId"`
	Match       struct {
		Source   string                  `json:"source"`
		SourceID int64                   `json:"sourceId"`
		Payload  map[string]payloadMatch `json:"payload"`
	} `json:"match"`
	Actions []actionStep `json:"actions"`
}

// actionStep is one action of a set (with its outcome, in a run).
type actionStep struct {
	Action          string            `json:"action"`
	ExecutionParams map[string]string `json:"executionParams"`
	State           string            `json:"state"`
	Details         string            `json:"details"`
}

// serviceAccount is an actor an action set can run as.
type serviceAccount struct {
	ID       int64  `json:"id"`
	Username string `json:"username"`
}

// actionChoices are what the action set editor offers.
type actionChoices struct {
	Endpoints    []signalEndpoint
	Environments []named
	Accounts     []serviceAccount
	Flags        []named
	ActionTypes  []struct{ ID, Label string }
	Operators    []string
}

// actionForm is the action set editor, for a new set (POST) or an
// existing one (PUT).
type actionForm struct {
	Set         actionSet
	New         bool
	Method, URL string
	Choices     actionChoices
	// Filters and Steps are the set's filters (by property name) and
	// actions as editor rows; BlankFilter and BlankStep are new rows.
	Filters, BlankFilter []filterRow
	Steps, BlankStep     []stepRow
}

// filterRow is one payload filter row of the editor.
type filterRow struct {
	Property  string
	Filter    payloadMatch
	Operators []string
}

// stepRow is one action row of the editor.
type stepRow struct {
	Step    actionStep
	Choices *actionChoices
}

// newActionForm builds the editor for set.
func newActionForm(set actionSet, method, url string, c *actionChoices) actionForm {
	f := actionForm{Set: set, New: method == "POST", Method: method, URL: url, Choices: *c,
		BlankFilter: []filterRow{{Filter: payloadMatch{Operator: "IN"}, Operators: c.Operators}},
		BlankStep:   []stepRow{{Step: actionStep{Action: "TOGGLE_FEATURE_OFF"}, Choices: c}}}
	keys := make([]string, 0, len(set.Match.Payload))
	for k := range set.Match.Payload {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		f.Filters = append(f.Filters, filterRow{Property: k, Filter: set.Match.Payload[k], Operators: c.Operators})
	}
	for _, st := range set.Actions {
		f.Steps = append(f.Steps, stepRow{Step: st, Choices: c})
	}
	if f.New {
		f.Steps = f.BlankStep
	}
	return f
}

// payloadMatch is one payload filter of an action set.
type payloadMatch struct {
	Operator        string   `json:"operator"`
	Values          []string `json:"values"`
	Value           string   `json:"value"`
	Inverted        bool     `json:"inverted"`
	CaseInsensitive bool     `json:"caseInsensitive"`
}

// actionLabels name the action types in the editor and lists.
var actionLabels = []struct{ ID, Label string }{
	{"TOGGLE_FEATURE_ON", "Switch a flag on"},
	{"TOGGLE_FEATURE_OFF", "Switch a flag off"},
	{"TOGGLE_FEATURES_ON_BY_TAG", "Switch the project's flags with a tag on"},
	{"TOGGLE_FEATURES_OFF_BY_TAG", "Switch the project's flags with a tag off"},
}

// actionLabelByID is actionLabels by action type.
var actionLabelByID = func() map[string]string {
	m := map[string]string{}
	for _, a := range actionLabels {
		m[a.ID] = a.Label
	}
	return m
}()

// chosenProject is the ?project= of a page, "default" when absent.
func chosenProject(r *http.Request) string {
	if p := r.URL.Query().Get("project"); p != "" {
		return p
	}
	return "default"
}

// listActionSets reads a project's action sets.
func (h *Handler) listActionSets(r *http.Request, s *session, project string) ([]actionSet, error) {
	var sets struct {
		Actions []actionSet `json:"actions"`
	}
	err := h.call(r, s, "GET", "/api/admin/projects/"+url.PathEscape(project)+"/actions", nil, &sets)
	return sets.Actions, err
}

func (h *Handler) actionSets(w http.ResponseWriter, r *http.Request, s *session) {
	project := chosenProject(r)
	p := page{Title: "Action sets", Nav: "signals", Session: s}
	sets, err := h.listActionSets(r, s, project)
	if h.failed(w, r, "actions", p, err) {
		return
	}
	endpoints, err := h.listEndpoints(r, s)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	var projects struct {
		Projects []named `json:"projects"`
	}
	var envs struct {
		Environments []named `json:"environments"`
	}
	var accounts struct {
		ServiceAccounts []serviceAccount `json:"serviceAccounts"`
	}
	var flags struct {
		Features []named `json:"features"`
	}
	for _, c := range []struct {
		path string
		out  any
	}{
		{"/api/admin/projects", &projects}, {"/api/admin/environments", &envs}, {"/api/admin/service-account", &accounts},
		{"/api/admin/projects/" + url.PathEscape(project) + "/features", &flags},
	} {
		if err := h.call(r, s, "GET", c.path, nil, c.out); err != nil {
			h.fail(w, r, s, err)
			return
		}
	}
	endpointNames := map[int64]string{}
	for _, e := range endpoints {
		endpointNames[e.ID] = e.Name
	}
	actorNames := map[int64]string{}
	for _, a := range accounts.ServiceAccounts {
		actorNames[a.ID] = a.Username
	}
	api := h.base + "/api/admin/projects/" + url.PathEscape(project) + "/actions"
	choices := actionChoices{Endpoints: endpoints, Environments: envs.Environments, Accounts: accounts.ServiceAccounts,
		Flags: flags.Features, ActionTypes: actionLabels, Operators: operators}
	forms := make([]actionForm, len(sets))
	for i, set := range sets {
		forms[i] = newActionForm(set, "PUT", api+"/"+strconv.FormatInt(set.ID, 10), &choices)
	}
	p.Data = map[string]any{
		"Project": project, "Sets": sets, "Forms": forms,
		"NewForm": newActionForm(actionSet{}, "POST", api, &choices), "Endpoints": endpoints, "EndpointNames": endpointNames,
		"Accounts": accounts.ServiceAccounts, "ActorNames": actorNames, "ActionLabels": actionLabelByID,
		"API":    api,
		"Picker": map[string]any{"Action": h.base + "/actions", "Project": project, "Projects": projects.Projects},
	}
	h.render(w, r, "actions", p)
}

// actionRun is one run of an action set: the signal that triggered it and
// each action's outcome.
type actionRun struct {
	ID        int64     `json:"id"`
	CreatedAt time.Time `json:"createdAt"`
	State     string    `json:"state"`
	Signal    struct {
		ID        int64           `json:"id"`
		TokenName *string         `json:"tokenName"`
		Payload   json.RawMessage `json:"payload"`
	} `json:"signal"`
	ActionSet actionSet `json:"actionSet"`
}

func (h *Handler) actionRuns(w http.ResponseWriter, r *http.Request, s *session) {
	project := chosenProject(r)
	p := page{Title: "Action runs", Nav: "signals", Session: s}
	sets, err := h.listActionSets(r, s, project)
	if h.failed(w, r, "runs", p, err) {
		return
	}
	var runs []actionRun
	for _, set := range sets {
		var list struct {
			Events []actionRun `json:"actionSetEvents"`
		}
		path := "/api/admin/projects/" + url.PathEscape(project) + "/actions/" + strconv.FormatInt(set.ID, 10) + "/events?limit=50"
		if err := h.call(r, s, "GET", path, nil, &list); err != nil {
			h.fail(w, r, s, err)
			return
		}
		runs = append(runs, list.Events...)
	}
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].CreatedAt.After(runs[j].CreatedAt) })
	var projects struct {
		Projects []named `json:"projects"`
	}
	_ = h.call(r, s, "GET", "/api/admin/projects", nil, &projects)
	p.Data = map[string]any{"Project": project, "Runs": runs, "ActionLabels": actionLabelByID,
		"Picker": map[string]any{"Action": h.base + "/actions/runs", "Project": project, "Projects": projects.Projects}}
	h.render(w, r, "runs", p)
}
