package webui

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"time"

	"github.com/bunting-flags/bunting/internal/changerequests"
)

// Change requests in the UI: the open requests (/change-requests), one
// request (/projects/{project}/change-requests/{id}) with each change's
// sentence and diff, its reviews, comments and the buttons of its flow,
// and "Review required" on the flag pages: in an environment where change
// requests are on, app.js turns each change into a change of the
// visitor's draft (see reviewEnvs), and the page shows the draft.

func (h *Handler) changeRequestRoutes() {
	h.mux.HandleFunc("GET /change-requests", h.withSession(h.changeRequests))
	h.mux.HandleFunc("GET /projects/{project}/change-requests/{id}", h.withSession(h.changeRequest))
}

// reviewState is what a page needs to show "Review required": the
// protected environments by project, and the visitor's drafts and the open
// requests that concern what it shows.
type reviewState struct {
	// Envs lists each project's protected environments (app.js reads it).
	Envs map[string][]string
	// Drafts are the visitor's drafts, Pending every open request of the
	// flag on a flag's page.
	Drafts, Pending []changerequests.View
}

// protected reads the environments of project where changes need a
// change request.
func (h *Handler) protected(r *http.Request, s *session, project string) ([]string, error) {
	var cfg []changerequests.EnvironmentConfig
	if err := h.call(r, s, "GET", "/api/admin/projects/"+url.PathEscape(project)+"/change-requests/config", nil, &cfg); err != nil {
		return nil, err
	}
	envs := []string{}
	for _, c := range cfg {
		if c.ChangeRequestEnabled {
			envs = append(envs, c.Environment)
		}
	}
	return envs, nil
}

// flagReview is the review state of a flag's page.
func (h *Handler) flagReview(r *http.Request, s *session, project, flag string) (reviewState, error) {
	st := reviewState{Envs: map[string][]string{}}
	envs, err := h.protected(r, s, project)
	if err != nil || len(envs) == 0 {
		return st, err
	}
	st.Envs[project] = envs
	p := "/api/admin/projects/" + url.PathEscape(project) + "/change-requests"
	if err := h.call(r, s, "GET", p+"/draft", nil, &st.Drafts); err != nil {
		return st, err
	}
	if err := h.call(r, s, "GET", p+"/pending/"+url.PathEscape(flag), nil, &st.Pending); err != nil {
		return st, err
	}
	st.Pending = slices.DeleteFunc(st.Pending, func(v changerequests.View) bool { return v.State == "Draft" })
	return st, nil
}

func (h *Handler) changeRequests(w http.ResponseWriter, r *http.Request, s *session) {
	state := r.URL.Query().Get("state")
	if state != "IS:closed" {
		state = "IS:open"
	}
	var res changerequests.SearchResult
	if err := h.call(r, s, "GET", "/api/admin/search/change-requests?limit=200&state="+url.QueryEscape(state), nil, &res); err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, "changerequests", page{Title: "Change requests", Nav: "change-requests", Session: s,
		Data: map[string]any{"Requests": res.ChangeRequests, "Total": res.Total, "State": state}})
}

func (h *Handler) changeRequest(w http.ResponseWriter, r *http.Request, s *session) {
	project := r.PathValue("project")
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id < 1 {
		h.fail(w, r, s, &apiError{Status: http.StatusNotFound, Message: "There is no change request " + r.PathValue("id") + "."})
		return
	}
	api := "/api/admin/projects/" + url.PathEscape(project) + "/change-requests/" + strconv.FormatInt(id, 10)
	var v changerequests.View
	if err := h.call(r, s, "GET", api, nil, &v); err != nil {
		h.fail(w, r, s, err)
		return
	}
	author := s.User.ID != 0 && v.CreatedBy.ID != nil && *v.CreatedBy.ID == s.User.ID
	if !author && s.User.ID == 0 {
		author = v.CreatedBy.Username == s.User.Name
	}
	open := slices.Contains([]string{"Draft", "In review", "Approved", "Scheduled"}, v.State)
	approvedByMe := false
	for _, a := range v.Approvals {
		if a.CreatedBy.ID != nil && *a.CreatedBy.ID == s.User.ID {
			approvedByMe = true
		}
	}
	type stamp struct {
		State string
		At    time.Time
	}
	var history []stamp
	for st, at := range v.StateTimestamps {
		history = append(history, stamp{st, at})
	}
	slices.SortFunc(history, func(a, b stamp) int { return a.At.Compare(b.At) })
	// Strategies in the changes name their segments as the flag page does.
	var segments struct {
		Segments []map[string]any `json:"segments"`
	}
	_ = h.call(r, s, "GET", "/api/admin/segments", nil, &segments)
	segmentNames := map[string]string{}
	for _, sg := range segments.Segments {
		segmentNames[str(sg["id"])] = str(sg["name"])
	}
	title := v.Title
	if title == "" {
		title = "Change request #" + strconv.FormatInt(v.ID, 10)
	}
	h.render(w, r, "changerequest", page{Title: title, Nav: "change-requests", Session: s, Data: map[string]any{
		"CR": v, "Title": title, "SegmentNames": segmentNames, "History": history, "API": h.base + api, "Project": project, "Author": author, "Open": open, "ApprovedByMe": approvedByMe,
		"CanReview":  !author && s.Can("APPROVE_CHANGE_REQUEST") && (v.State == "In review" || v.State == "Approved") && !approvedByMe,
		"CanReject":  !author && s.Can("APPROVE_CHANGE_REQUEST") && (v.State == "In review" || v.State == "Approved" || v.State == "Scheduled"),
		"CanApply":   s.Can("APPLY_CHANGE_REQUEST") && (v.State == "Approved" || v.State == "Scheduled"),
		"CanCancel":  open && (author || s.Can("ADMIN")),
		"Playground": h.base + "/playground?environment=" + url.QueryEscape(v.Environment) + "&changeRequest=" + strconv.FormatInt(v.ID, 10),
	}})
}

// listReview marks the flags of a list that open change requests change,
// and reads the protected environments of their projects.
func (h *Handler) listReview(r *http.Request, s *session, flags []flagRow) (reviewState, error) {
	st := reviewState{Envs: map[string][]string{}}
	if len(flags) == 0 {
		return st, nil
	}
	var open changerequests.SearchResult
	if err := h.call(r, s, "GET", "/api/admin/search/change-requests?state=IS:open&limit=1000", nil, &open); err != nil {
		return st, err
	}
	for i := range flags {
		f := &flags[i]
		for _, cr := range open.ChangeRequests {
			if cr.Project == f.Project && slices.Contains(cr.Features, f.Name) && cr.State != "Draft" {
				f.Pending = append(f.Pending, cr.ID)
			}
		}
		if _, seen := st.Envs[f.Project]; seen {
			continue
		}
		envs, err := h.protected(r, s, f.Project)
		if err != nil {
			return st, err
		}
		st.Envs[f.Project] = envs
	}
	return st, nil
}
