// Package integrationsapi serves Unleash's addon API (/api/admin/addons):
// the integrations, their provider definitions, each one's delivery log
// and a test send. Each handler decodes the request and runs one
// internal/integrations operation as the request's principal, which checks
// the permission, validates, changes and writes the event.
package integrationsapi

import (
	"net/http"
	"strconv"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/integrations"
	"github.com/bunting-flags/bunting/internal/server/route"
)

// API serves the addon routes.
type API struct {
	svc *integrations.Service
}

// New builds the API on svc.
func New(svc *integrations.Service) *API { return &API{svc: svc} }

// AddonList is the answer of GET /api/admin/addons (addonsSchema).
type AddonList struct {
	Addons    []integrations.Addon              `json:"addons"`
	Providers []integrations.ProviderDefinition `json:"providers"`
}

// IntegrationEventList is the answer of GET /api/admin/addons/{id}/events
// (integrationEventsSchema).
type IntegrationEventList struct {
	IntegrationEvents []integrations.IntegrationEvent `json:"integrationEvents"`
}

// bodyLimit caps an addon body (a body template may be long).
const bodyLimit = 256 << 10

// Register registers the addon routes: reading integrations and their
// delivery log is part of managing them (UPDATE_ADDON); creating and
// deleting need CREATE_ADDON and DELETE_ADDON. Only Admin holds these among
// the predefined roles (an integration sends events out of Bunting).
func (a *API) Register(r route.Registrar) {
	r.Admin("GET /api/admin/addons", domain.PermUpdateAddon, a.list,
		route.API("Addons", "List the integrations (secrets masked) and the provider definitions", 200, nil, AddonList{}))
	r.Admin("POST /api/admin/addons", domain.PermCreateAddon, a.create, route.JSON,
		route.API("Addons", "Create an integration (a webhook's signing secret, when generated, is shown in this answer only)", 201, integrations.AddonInput{}, integrations.Addon{}))
	r.Admin("GET /api/admin/addons/{id}", domain.PermUpdateAddon, a.get,
		route.API("Addons", "Get an integration (secrets masked)", 200, nil, integrations.Addon{}))
	r.Admin("PUT /api/admin/addons/{id}", domain.PermUpdateAddon, a.update, route.JSON,
		route.API("Addons", "Update an integration (a masked or left-out secret keeps its value)", 200, integrations.AddonInput{}, integrations.Addon{}))
	r.Admin("DELETE /api/admin/addons/{id}", domain.PermDeleteAddon, a.remove,
		route.API("Addons", "Delete an integration with its pending deliveries and its log", 200, nil, nil))
	r.Admin("GET /api/admin/addons/{id}/events", domain.PermUpdateAddon, a.log,
		route.API("Addons", "An integration's delivery log, newest first: each attempt with its event, state, answer and error (limit 1–100, default 50; offset)", 200, nil, IntegrationEventList{}))
	r.Admin("POST /api/admin/addons/{id}/test", domain.PermUpdateAddon, a.test,
		route.API("Addons", "Send a test event to an integration now and answer the attempt (also written to its log)", 200, nil, integrations.IntegrationEvent{}))
}

func (a *API) list(w http.ResponseWriter, r *http.Request) error {
	addons, err := a.svc.List(r.Context())
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, AddonList{Addons: addons, Providers: integrations.Providers()})
}

func (a *API) create(w http.ResponseWriter, r *http.Request) error {
	var in integrations.AddonInput
	if err := httpjson.Decode(r, bodyLimit, &in); err != nil {
		return err
	}
	out, err := a.svc.Create(r.Context(), domain.PrincipalFrom(r.Context()), in)
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "api/admin/addons/%s", strconv.FormatInt(out.ID, 10))
	return httpjson.Write(w, http.StatusCreated, out)
}

func (a *API) get(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	out, err := a.svc.Get(r.Context(), id)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, out)
}

func (a *API) update(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	var in integrations.AddonInput
	if err := httpjson.Decode(r, bodyLimit, &in); err != nil {
		return err
	}
	out, err := a.svc.Update(r.Context(), domain.PrincipalFrom(r.Context()), id, in)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, out)
}

func (a *API) remove(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := a.svc.Delete(r.Context(), domain.PrincipalFrom(r.Context()), id); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (a *API) log(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	limit, offset, err := paging(r)
	if err != nil {
		return err
	}
	events, err := a.svc.Log(r.Context(), domain.PrincipalFrom(r.Context()), id, limit, offset)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, IntegrationEventList{IntegrationEvents: events})
}

func (a *API) test(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	out, err := a.svc.Test(r.Context(), domain.PrincipalFrom(r.Context()), id)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, out)
}

// paging reads limit (1–100, default 50, as Unleash) and offset.
func paging(r *http.Request) (limit, offset int, err error) {
	limit = 50
	q := r.URL.Query()
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 {
			return 0, 0, apierr.Validation("The `limit` query parameter must be a whole number from 1 to 100; you sent %q.", v)
		}
		limit = n
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, 0, apierr.Validation("The `offset` query parameter must be a whole number of 0 or more; you sent %q.", v)
		}
		offset = n
	}
	return limit, offset, nil
}
