package adminapi

import (
	"net/http"
	"strconv"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

func (s *API) listFeatureTypes(w http.ResponseWriter, r *http.Request) error {
	types, err := s.store.Q(r.Context()).FeatureTypes()
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "types": types})
}

// eventList is the events envelope.
type eventList struct {
	Version     int           `json:"version"`
	Events      []store.Event `json:"events"`
	TotalEvents int           `json:"totalEvents"`
}

func (s *API) listEvents(w http.ResponseWriter, r *http.Request) error {
	f := store.EventFilter{Limit: 100, HiddenProjects: domain.PrincipalFrom(r.Context()).Grants().HiddenProjects()}
	if p := r.URL.Query().Get("project"); p != "" {
		f.Project, f.Limit = p, 1<<30
	}
	events, total, err := s.store.Q(r.Context()).Events(f)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, eventList{Version: 1, Events: events, TotalEvents: total})
}

// listFeatureEvents answers the newest events of one flag.
func (s *API) listFeatureEvents(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("featureName")
	events, total, err := s.store.Q(r.Context()).Events(store.EventFilter{Feature: name, Limit: 100,
		HiddenProjects: domain.PrincipalFrom(r.Context()).Grants().HiddenProjects()})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "toggleName": name, "events": events, "totalEvents": total})
}

// eventSearch is the body of POST /api/admin/events/search.
type eventSearch struct {
	Type    string `json:"type"`
	Project string `json:"project"`
	Feature string `json:"feature"`
	Query   string `json:"query"`
	Limit   *int   `json:"limit"`
	Offset  *int   `json:"offset"`
}

func (s *API) searchEvents(w http.ResponseWriter, r *http.Request) error {
	var body eventSearch
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	f := store.EventFilter{Type: body.Type, Project: body.Project, Feature: body.Feature, Query: body.Query, Limit: 100,
		HiddenProjects: domain.PrincipalFrom(r.Context()).Grants().HiddenProjects()}
	if body.Type != "" && !isEventType(body.Type) {
		return apierr.Validation("The `type` property must be one of the known event types; you sent %s.", strconv.Quote(body.Type))
	}
	if body.Limit != nil {
		if *body.Limit < 1 || *body.Limit > 100 {
			return apierr.Validation("The `limit` property must be between 1 and 100. You sent %d.", *body.Limit)
		}
		f.Limit = *body.Limit
	}
	if body.Offset != nil {
		if *body.Offset < 0 {
			return apierr.Validation("The `offset` property must be >= 0. You sent %d.", *body.Offset)
		}
		f.Offset = *body.Offset
	}
	events, total, err := s.store.Q(r.Context()).Events(f)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, eventList{Version: 1, Events: events, TotalEvents: total})
}

func isEventType(t string) bool { return domain.IsEventType(t) }
