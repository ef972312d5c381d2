package webui

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/integrations"
	"github.com/bunting-flags/bunting/internal/server/integrationsapi"
)

// The integrations screens: the configured integrations with their
// filters, an enable/disable button, a test send and an editor, a form per
// provider to create one (/integrations), and one integration's delivery
// log (/integrations/{id}/log). Every call needs ADMIN.

func (h *Handler) integrationRoutes() {
	h.mux.HandleFunc("GET /integrations", h.withSession(h.integrations))
	h.mux.HandleFunc("GET /integrations/{id}/log", h.withSession(h.integrationLog))
}

// integrationView is an integration with what its card needs.
type integrationView struct {
	integrations.Addon
	Definition integrations.ProviderDefinition
	// Body is the integration as a PUT body (masked secrets keep their
	// values), for the enable/disable button.
	Body string
	// Form is its editor.
	Form integrationForm
}

// integrationForm is the editor of an integration, new (Params empty) or
// stored (its values, secrets masked).
type integrationForm struct {
	// Key makes the form's element ids unique.
	Key         string
	Def         integrations.ProviderDefinition
	Params      map[string]string
	Description string
	// Events are the event types offered (the provider's suggestions and
	// whatever is chosen already); Chosen those chosen.
	Events, Chosen         []string
	Projects, Environments string
	Enabled                bool
}

func (h *Handler) integrations(w http.ResponseWriter, r *http.Request, s *session) {
	p := page{Title: "Integrations", Nav: "integrations", Session: s}
	var list integrationsapi.AddonList
	if h.failed(w, r, "integrations", p, h.call(r, s, "GET", "/api/admin/addons", nil, &list)) {
		return
	}
	defs := map[string]integrations.ProviderDefinition{}
	for _, d := range list.Providers {
		defs[d.Name] = d
	}
	var views []integrationView
	for _, a := range list.Addons {
		body, _ := json.Marshal(map[string]any{"provider": a.Provider, "description": a.Description, "enabled": a.Enabled,
			"parameters": a.Parameters, "events": a.Events, "projects": a.Projects, "environments": a.Environments})
		events := slices.Clone(defs[a.Provider].Events)
		for _, e := range a.Events {
			if !slices.Contains(events, e) {
				events = append(events, e)
			}
		}
		desc := ""
		if a.Description != nil {
			desc = *a.Description
		}
		form := integrationForm{Key: strconv.FormatInt(a.ID, 10), Def: defs[a.Provider], Params: a.Parameters, Description: desc,
			Events: events, Chosen: a.Events, Projects: strings.Join(a.Projects, ", "), Environments: strings.Join(a.Environments, ", "), Enabled: a.Enabled}
		views = append(views, integrationView{Addon: a, Definition: defs[a.Provider], Body: string(body), Form: form})
	}
	var forms []integrationForm
	for _, d := range list.Providers {
		forms = append(forms, integrationForm{Key: "new-" + d.Name, Def: d, Params: map[string]string{}, Events: d.Events, Enabled: true})
	}
	p.Data = map[string]any{"Integrations": views, "New": forms}
	h.render(w, r, "integrations", p)
}

func (h *Handler) integrationLog(w http.ResponseWriter, r *http.Request, s *session) {
	p := page{Title: "Delivery log", Nav: "integrations", Session: s}
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		http.NotFound(w, r)
		return
	}
	var addon integrations.Addon
	if h.failed(w, r, "integration-log", p, h.call(r, s, "GET", "/api/admin/addons/"+strconv.FormatInt(id, 10), nil, &addon)) {
		return
	}
	var log integrationsapi.IntegrationEventList
	if err := h.call(r, s, "GET", "/api/admin/addons/"+strconv.FormatInt(id, 10)+"/events?limit=100", nil, &log); err != nil {
		h.fail(w, r, s, err)
		return
	}
	p.Data = map[string]any{"Addon": addon, "Log": log.IntegrationEvents}
	h.render(w, r, "integration-log", p)
}

// integrationFuncs are the integrations screens' template helpers.
var integrationFuncs = map[string]any{
	// addonParam is a parameter's current value ("" when unset).
	"addonParam": func(params map[string]string, name string) string { return params[name] },
	// detail is one of a log row's details as text.
	"detail": func(d map[string]any, key string) string {
		v, ok := d[key]
		if !ok || v == nil {
			return ""
		}
		if s, ok := v.(string); ok {
			return s
		}
		b, _ := json.Marshal(v)
		return string(b)
	},
	"csv": func(l []string) string { return strings.Join(l, ", ") },
}
