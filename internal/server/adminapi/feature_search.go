package adminapi

import (
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/server/route"
	"net/http"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// searchFeatures answers GET /api/admin/search/features: flags across
// projects filtered by query (name or description), project, type, tag
// (type:value), stale, archived and state (environment:on|off), one page
// (offset, limit ≤ 200) at a time, sorted by name, with the total and the
// environments, projects and flag types the filters offer.
func (s *API) searchFeatures(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	p := domain.PrincipalFrom(r.Context())
	q := store.FeatureSearch{Text: v.Get("query"), Project: v.Get("project"), Type: v.Get("type"), Limit: 50,
		HiddenProjects: p.Grants().HiddenProjects()}
	if len(q.Text) > 200 {
		return apierr.Validation("The `query` parameter must have at most 200 characters.")
	}
	if t := v.Get("tag"); t != "" {
		typ, value, ok := strings.Cut(t, ":")
		if !ok || typ == "" || value == "" {
			return apierr.Validation("The `tag` parameter must be type:value. You sent %q.", t)
		}
		q.TagType, q.TagValue = typ, value
	}
	for _, b := range []struct {
		name string
		dst  **bool
	}{{"stale", &q.Stale}} {
		if raw := v.Get(b.name); raw != "" {
			val, err := strconv.ParseBool(raw)
			if err != nil {
				return apierr.Validation("The `%s` parameter must be true or false. You sent %q.", b.name, raw)
			}
			*b.dst = &val
		}
	}
	if raw := v.Get("archived"); raw != "" {
		val, err := strconv.ParseBool(raw)
		if err != nil {
			return apierr.Validation("The `archived` parameter must be true or false. You sent %q.", raw)
		}
		q.Archived = val
	}
	if st := v.Get("state"); st != "" {
		env, state, _ := strings.Cut(st, ":")
		if env == "" || (state != "on" && state != "off") {
			return apierr.Validation("The `state` parameter must be environment:on or environment:off. You sent %q.", st)
		}
		on := state == "on"
		q.Environment, q.Enabled = env, &on
	}
	for _, n := range []struct {
		name     string
		dst      *int
		min, max int
	}{{"offset", &q.Offset, 0, 1 << 30}, {"limit", &q.Limit, 1, 200}} {
		if raw := v.Get(n.name); raw != "" {
			val, err := strconv.Atoi(raw)
			if err != nil || val < n.min || val > n.max {
				return apierr.Validation("The `%s` parameter must be a whole number from %d to %d. You sent %q.", n.name, n.min, n.max, raw)
			}
			*n.dst = val
		}
	}
	st := s.store.Q(r.Context())
	hits, total, err := st.SearchFeatures(q)
	if err != nil {
		return err
	}
	// What the filters offer, so a flags page needs this one request.
	envs, err := st.Environments()
	if err != nil {
		return err
	}
	projects, err := st.Projects()
	if err != nil {
		return err
	}
	types, err := st.FeatureTypes()
	if err != nil {
		return err
	}
	projectNames := make([]map[string]string, 0, len(projects))
	for _, pr := range projects {
		if p.CanSeeProject(pr.ID) {
			projectNames = append(projectNames, map[string]string{"id": pr.ID, "name": pr.Name})
		}
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"features": hits, "total": total, "environments": envs, "projects": projectNames, "types": types})
}

// RegisterSearch registers the flag search that the web UI pages through
// thousands of flags with.
func (s *API) RegisterSearch(r route.Registrar) {
	r.Admin("GET /api/admin/search/features", "", s.searchFeatures,
		api("Features", "Search flags, a page at a time (query, project, type, tag, state, archived, …)", 200, nil, featureSearchResult{}))
}
