package adminapi

import (
	"github.com/bunting-flags/bunting/internal/domain"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/bunting-flags/bunting/internal/apierr"
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

func isEventType(t string) bool { _, ok := eventTypes()[t]; return ok }

// eventTypes are the event types of the specification's list, as a set
// built on first use.
var eventTypes = sync.OnceValue(func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, t := range strings.Fields(eventTypeList) {
		m[t] = struct{}{}
	}
	return m
})

const eventTypeList = `application-created feature-created feature-deleted feature-updated feature-metadata-updated
feature-variants-updated feature-environment-variants-updated feature-project-change feature-archived feature-revived
feature-import feature-tagged feature-tag-import feature-strategy-update feature-strategy-add feature-strategy-remove
feature-type-updated strategy-order-changed drop-feature-tags feature-untagged feature-stale-on feature-stale-off
drop-features feature-environment-enabled feature-environment-disabled strategy-created strategy-deleted
strategy-deprecated strategy-reactivated strategy-updated strategy-import drop-strategies context-field-created
context-field-updated context-field-deleted project-access-added project-access-user-roles-updated
project-access-group-roles-updated project-access-user-roles-deleted project-access-group-roles-deleted
project-access-updated project-created project-updated project-deleted project-import project-user-added
project-user-removed project-user-role-changed project-group-role-changed project-group-added project-group-removed
role-created role-updated role-deleted drop-projects tag-created tag-deleted tag-import drop-tags tag-type-created
tag-type-deleted tag-type-updated tag-type-import drop-tag-types addon-config-created addon-config-updated
addon-config-deleted db-pool-update user-created user-updated user-deleted drop-environments environment-import
environment-created environment-updated environment-deleted segment-created segment-updated segment-deleted
group-created group-updated group-deleted group-user-added group-user-removed setting-created setting-updated
setting-deleted client-metrics client-register pat-created pat-deleted public-signup-token-created
public-signup-token-user-added public-signup-token-updated change-request-created change-request-discarded
change-added change-discarded change-edited change-request-rejected change-request-approved
change-request-approval-added change-request-cancelled change-request-sent-to-review
change-request-schedule-suspended change-request-applied change-request-scheduled
change-request-scheduled-application-success change-request-scheduled-application-failure
change-request-configuration-updated api-token-created api-token-updated api-token-deleted feature-favorited
feature-unfavorited project-favorited project-unfavorited features-exported features-imported
service-account-created service-account-deleted service-account-updated feature-potentially-stale-on
feature-dependency-added feature-dependency-removed feature-dependencies-removed banner-created banner-updated
banner-deleted project-environment-added project-environment-removed default-strategy-updated segment-import
signal-endpoint-created signal-endpoint-updated signal-endpoint-deleted signal-endpoint-token-created
signal-endpoint-token-updated signal-endpoint-token-deleted actions-created actions-updated actions-deleted
project-archived project-revived`
