// Package changerequestsapi serves change requests over HTTP in Unleash's
// API shape: each project environment's setting, drafts and their
// changes, the flow (review, approval, rejection, application, schedule),
// comments, and the reads (one request, a project's lists, pending
// requests of a flag, the search). Each handler decodes the request and
// runs one internal/changerequests operation as the request's principal,
// which checks the permission, validates, changes and writes the events.
package changerequestsapi

import (
	"net/http"
	"strconv"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/changerequests"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/server/route"
	"github.com/bunting-flags/bunting/internal/store"
)

// API serves the change request routes.
type API struct {
	svc *changerequests.Service
}

// New builds the API on svc.
func New(svc *changerequests.Service) *API { return &API{svc: svc} }

// bodyLimit caps a body: a list of changes may be long.
const bodyLimit = 1 << 20

// Register registers the change request routes. Approving and applying
// need APPROVE_CHANGE_REQUEST and APPLY_CHANGE_REQUEST, which depend on
// the state asked for: the operations check them.
func (a *API) Register(r route.Registrar) {
	const P = "/api/admin/projects/{projectId}"
	const CR = P + "/change-requests"
	const tag = "Change requests"
	r.Admin("GET "+CR+"/config", "", a.config,
		route.API(tag, "Each environment of the project with its change request setting", 200, nil, []changerequests.EnvironmentConfig{}))
	r.Admin("PUT "+P+"/environments/{environment}/change-requests/config", domain.PermUpdateProject, a.configure, route.JSON,
		route.API(tag, "Turn change requests on or off in a project environment, with the approvals a request needs (1–10)", 204, changerequests.ConfigInput{}, nil))
	r.Admin("POST "+P+"/environments/{environment}/change-requests", "", a.addChanges, route.JSON,
		route.API(tag, "Add one change or a list of changes ({feature, action, payload}) to your draft in the environment, made when you have none; each is checked by the operation that will apply it", 200, changerequests.ChangeInputs{}, changerequests.View{}))
	r.Admin("GET "+CR, "", a.list,
		route.API(tag, "The project's change requests, newest first", 200, nil, []changerequests.View{}))
	r.Admin("GET "+CR+"/open", "", a.open,
		route.API(tag, "The project's open change requests (Draft, In review, Approved, Scheduled)", 200, nil, []changerequests.View{}))
	r.Admin("GET "+CR+"/draft", "", a.drafts,
		route.API(tag, "Your drafts in the project", 200, nil, []changerequests.View{}))
	r.Admin("GET "+CR+"/pending", "", a.open,
		route.API(tag, "The project's pending change requests (every open one)", 200, nil, []changerequests.View{}))
	r.Admin("GET "+CR+"/pending/{featureName}", "", a.pendingForFeature,
		route.API(tag, "The open change requests that change a flag", 200, nil, []changerequests.View{}))
	r.Admin("GET "+CR+"/count", "", a.count,
		route.API(tag, "The project's change requests counted by stage", 200, nil, changerequests.Counts{}))
	r.Admin("GET "+CR+"/{id}", "", a.get,
		route.API(tag, "A change request with its changes (each with a sentence, its diff and any conflict), reviews, comments and schedule", 200, nil, changerequests.View{}))
	r.Admin("DELETE "+CR+"/{id}", "", a.discard,
		route.API(tag, "Discard your draft", 200, nil, nil))
	r.Admin("PUT "+CR+"/{id}/state", "", a.setState, route.JSON,
		route.API(tag, "Move a change request: In review, Approved (APPROVE_CHANGE_REQUEST, not the author), Rejected, Cancelled, Applied (APPLY_CHANGE_REQUEST, every change in one transaction) or Scheduled (with scheduledAt)", 200, changerequests.StateInput{}, changerequests.View{}))
	r.Admin("PUT "+CR+"/{id}/title", "", a.setTitle, route.JSON,
		route.API(tag, "Rename your change request", 204, changerequests.TitleInput{}, nil))
	r.Admin("POST "+CR+"/{id}/comments", "", a.comment, route.JSON,
		route.API(tag, "Comment on a change request", 201, changerequests.CommentInput{}, nil))
	r.Admin("PUT "+CR+"/{id}/changes/{changeId}", "", a.editChange, route.JSON,
		route.API(tag, "Replace a change of your open request (a request past Draft goes back to review: its approvals are taken back)", 200, changerequests.ChangeInput{}, changerequests.View{}))
	r.Admin("DELETE "+CR+"/{id}/changes/{changeId}", "", a.discardChange,
		route.API(tag, "Remove a change from your open request (a request past Draft goes back to review)", 200, nil, nil))
	r.Admin("GET /api/admin/search/change-requests", "", a.search,
		route.API(tag, "Search change requests: createdBy (a user id), state (IS:open or IS:closed), offset, limit (1–1000, default 50)", 200, nil, changerequests.SearchResult{}))
}

func (a *API) config(w http.ResponseWriter, r *http.Request) error {
	out, err := a.svc.Settings(r.Context(), r.PathValue("projectId"))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, out)
}

func (a *API) configure(w http.ResponseWriter, r *http.Request) error {
	var in changerequests.ConfigInput
	if err := httpjson.Decode(r, bodyLimit, &in); err != nil {
		return err
	}
	if err := a.svc.Configure(r.Context(), domain.PrincipalFrom(r.Context()), r.PathValue("projectId"), r.PathValue("environment"), in); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusNoContent)
}

func (a *API) addChanges(w http.ResponseWriter, r *http.Request) error {
	var in changerequests.ChangeInputs
	if err := httpjson.Decode(r, bodyLimit, &in); err != nil {
		return err
	}
	out, err := a.svc.AddChanges(r.Context(), domain.PrincipalFrom(r.Context()), r.PathValue("projectId"), r.PathValue("environment"), in)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, out)
}

func (a *API) listWith(w http.ResponseWriter, r *http.Request, f store.ChangeRequestFilter) error {
	f.Project = r.PathValue("projectId")
	if _, err := a.svc.Store().Q(r.Context()).Project(f.Project); err != nil {
		return err
	}
	out, err := a.svc.List(r.Context(), f)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, out)
}

func (a *API) list(w http.ResponseWriter, r *http.Request) error {
	return a.listWith(w, r, store.ChangeRequestFilter{})
}

func (a *API) open(w http.ResponseWriter, r *http.Request) error {
	return a.listWith(w, r, store.ChangeRequestFilter{States: store.OpenChangeRequestStates})
}

func (a *API) drafts(w http.ResponseWriter, r *http.Request) error {
	p := domain.PrincipalFrom(r.Context())
	return a.listWith(w, r, store.ChangeRequestFilter{States: []string{store.CRDraft}, AuthorKey: changerequests.PrincipalKey(p)})
}

func (a *API) pendingForFeature(w http.ResponseWriter, r *http.Request) error {
	return a.listWith(w, r, store.ChangeRequestFilter{States: store.OpenChangeRequestStates, Feature: r.PathValue("featureName")})
}

func (a *API) count(w http.ResponseWriter, r *http.Request) error {
	out, err := a.svc.Count(r.Context(), r.PathValue("projectId"))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, out)
}

func (a *API) get(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	out, err := a.svc.Get(r.Context(), r.PathValue("projectId"), id)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, out)
}

func (a *API) discard(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	if err := a.svc.Discard(r.Context(), domain.PrincipalFrom(r.Context()), r.PathValue("projectId"), id); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (a *API) setState(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	var in changerequests.StateInput
	if err := httpjson.Decode(r, bodyLimit, &in); err != nil {
		return err
	}
	out, err := a.svc.SetState(r.Context(), domain.PrincipalFrom(r.Context()), r.PathValue("projectId"), id, in)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, out)
}

func (a *API) setTitle(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	var in changerequests.TitleInput
	if err := httpjson.Decode(r, bodyLimit, &in); err != nil {
		return err
	}
	if err := a.svc.SetTitle(r.Context(), domain.PrincipalFrom(r.Context()), r.PathValue("projectId"), id, in); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusNoContent)
}

func (a *API) comment(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	var in changerequests.CommentInput
	if err := httpjson.Decode(r, bodyLimit, &in); err != nil {
		return err
	}
	if err := a.svc.AddComment(r.Context(), domain.PrincipalFrom(r.Context()), r.PathValue("projectId"), id, in); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusCreated)
}

func (a *API) editChange(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	changeID, err := route.PathID(r, "changeId")
	if err != nil {
		return err
	}
	var in changerequests.ChangeInput
	if err := httpjson.Decode(r, bodyLimit, &in); err != nil {
		return err
	}
	out, err := a.svc.EditChange(r.Context(), domain.PrincipalFrom(r.Context()), r.PathValue("projectId"), id, changeID, in)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, out)
}

func (a *API) discardChange(w http.ResponseWriter, r *http.Request) error {
	id, err := route.PathID(r, "id")
	if err != nil {
		return err
	}
	changeID, err := route.PathID(r, "changeId")
	if err != nil {
		return err
	}
	if err := a.svc.DiscardChange(r.Context(), domain.PrincipalFrom(r.Context()), r.PathValue("projectId"), id, changeID); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (a *API) search(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	f := store.ChangeRequestFilter{Limit: 50}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 1000 {
			return apierr.Validation("The `limit` query parameter must be a whole number from 1 to 1000; you sent %q.", v)
		}
		f.Limit = n
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return apierr.Validation("The `offset` query parameter must be a whole number of 0 or more; you sent %q.", v)
		}
		f.Offset = n
	}
	if v := q.Get("createdBy"); v != "" {
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return apierr.Validation("The `createdBy` query parameter must be a user id; you sent %q.", v)
		}
		f.CreatedByUserID = &n
	}
	switch v := q.Get("state"); v {
	case "":
	case "IS:open":
		f.States = store.OpenChangeRequestStates
	case "IS:closed":
		f.States = []string{store.CRApplied, store.CRCancelled, store.CRRejected}
	default:
		return apierr.Validation("The `state` query parameter must be IS:open or IS:closed; you sent %q.", v)
	}
	if q.Get("requestedApproverId") != "" {
		// Bunting has no requested approvers: no request names one.
		return httpjson.Write(w, http.StatusOK, changerequests.SearchResult{ChangeRequests: []changerequests.SearchItem{}})
	}
	out, err := a.svc.Search(r.Context(), f)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, out)
}
