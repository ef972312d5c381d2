// Package adminapi serves the admin API (/api/admin/...): flags and their
// strategies, projects, environments, segments, context fields, tags,
// strategy types, API tokens and service accounts, events, state import
// and export, the playground, the flag search, the applications SDKs
// report as (read through internal/usage), and the routes of signal
// endpoints and action sets (handlers in internal/signals). Each handler
// decodes the request, runs one internal/domain operation in a store
// transaction as the request's principal, and answers.
package adminapi

import (
	"github.com/bunting-flags/bunting/internal/server/route"
	"github.com/bunting-flags/bunting/internal/signals"
	"github.com/bunting-flags/bunting/internal/store"
	"github.com/bunting-flags/bunting/internal/usage"
)

// API serves the admin API.
type API struct {
	store    *store.Store
	signals  *signals.Service
	usage    *usage.Service
	instance Instance
	// ChangeRequests lets the playground evaluate as if a change request
	// were applied (nil: not offered).
	ChangeRequests ChangeRequestPreviewer
}

// New builds the admin API on st; sg serves the signal and action routes,
// u the applications view.
func New(st *store.Store, sg *signals.Service, u *usage.Service) *API {
	return &API{store: st, signals: sg, usage: u}
}

// The options written on registration lines (routes_*.go), and the
// positive integer path value.
var (
	api       = route.API
	withJSON  = route.JSON
	envScoped = route.EnvScoped
	pathID    = route.PathID
)
