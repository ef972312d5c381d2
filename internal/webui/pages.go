package webui

import (
	"encoding/json"
	"fmt"
	"github.com/bunting-flags/bunting/internal/apierr"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
)

func (h *Handler) routes() {
	m := h.mux
	m.Handle("GET /static/", h.cached(h.static))
	m.HandleFunc("GET /login", h.login)
	m.HandleFunc("POST /login", h.loginForm)
	m.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, h.base+"/flags", http.StatusSeeOther)
	})
	m.HandleFunc("GET /flags", h.withSession(h.flags))
	m.HandleFunc("GET /flags/new", h.withSession(h.newFlag))
	m.HandleFunc("GET /projects/{project}/flags/{name}", h.withSession(h.flag))
	m.HandleFunc("GET /events", h.withSession(h.events))
	m.HandleFunc("GET /playground", h.withSession(h.playground))
	m.HandleFunc("GET /segments", h.withSession(h.simpleList("segments", "Segments", "/api/admin/segments", h.segmentVersions)))
	m.HandleFunc("GET /context", h.withSession(h.simpleList("context", "Context fields", "/api/admin/context", h.contextUses)))
	m.HandleFunc("GET /tokens", h.withSession(h.tokens))
	m.HandleFunc("GET /projects", h.withSession(h.projects))
	m.HandleFunc("GET /users", h.withSession(h.users))
	m.HandleFunc("GET /applications", h.withSession(h.applications))
	m.HandleFunc("GET /applications/{appName}", h.withSession(h.application))
	h.signalRoutes()
	h.integrationRoutes()
	h.accessRoutes()
	h.changeRequestRoutes()
	h.ssoRoutes()
	m.HandleFunc("GET /account", h.withSession(h.account))
	m.HandleFunc("GET /", func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "text/html") {
			// Not a browser: the API's JSON 404, as for every other path.
			apierr.Write(w, r, h.log, apierr.NotFound("The path you were looking for (%s) is not available.", r.URL.Path))
			return
		}
		h.renderStatus(w, r, http.StatusNotFound, "error", page{Title: "Not found", Data: map[string]any{"Status": 404, "Message": "There is no page at " + r.URL.Path + "."}})
	})
}

// cached serves embedded files with a day of caching (their URLs carry
// the build's content, so a new binary serves new files) and gzip for
// clients that accept it.
func (h *Handler) cached(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=86400")
		next.ServeHTTP(w, r)
	})
}

// flagRow is one flag of the flags list.
type flagRow struct {
	Name         string  `json:"name"`
	Project      string  `json:"project"`
	Type         string  `json:"type"`
	Description  *string `json:"description"`
	Stale        bool    `json:"stale"`
	Archived     bool    `json:"archived"`
	Environments []struct {
		Name                 string `json:"name"`
		Enabled              bool   `json:"enabled"`
		HasEnabledStrategies bool   `json:"hasEnabledStrategies"`
	} `json:"environments"`
	Tags []struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	} `json:"tags"`
	// Cells are the switches in the table's environment columns.
	Cells []flagCell `json:"-"`
	// Pending are the open change requests that change the flag.
	Pending []int64 `json:"-"`
}

// flagCell is a flag's switch in one environment column.
type flagCell struct {
	Env                                    string
	Present, Enabled, HasEnabledStrategies bool
}

type named struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	// Description explains a flag type on the new-flag form.
	Description string `json:"description"`
}

const flagsPerPage = 50

func (h *Handler) flags(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	params := url.Values{}
	for _, k := range []string{"query", "project", "type", "tag", "stale", "archived", "state"} {
		if v := strings.TrimSpace(q.Get(k)); v != "" {
			params.Set(k, v)
		}
	}
	offset, _ := strconv.Atoi(q.Get("offset"))
	if offset < 0 {
		offset = 0
	}
	params.Set("offset", strconv.Itoa(offset))
	params.Set("limit", strconv.Itoa(flagsPerPage))
	var list struct {
		Features     []flagRow `json:"features"`
		Total        int       `json:"total"`
		Environments []named   `json:"environments"`
		Projects     []named   `json:"projects"`
		Types        []named   `json:"types"`
	}
	if err := h.call(r, s, "GET", "/api/admin/search/features?"+params.Encode(), nil, &list); err != nil {
		h.fail(w, r, s, err)
		return
	}
	// One cell per environment column, in the columns' order.
	for i := range list.Features {
		f := &list.Features[i]
		f.Cells = make([]flagCell, len(list.Environments))
		for j, e := range list.Environments {
			f.Cells[j].Env = e.Name
			for _, fe := range f.Environments {
				if fe.Name == e.Name {
					f.Cells[j].Present, f.Cells[j].Enabled, f.Cells[j].HasEnabledStrategies = true, fe.Enabled, fe.HasEnabledStrategies
				}
			}
		}
	}
	review, err := h.listReview(r, s, list.Features)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	pageURL := func(off int) string {
		p := url.Values{}
		for k, v := range params {
			p[k] = v
		}
		p.Del("limit")
		p.Set("offset", strconv.Itoa(off))
		return h.base + "/flags?" + p.Encode()
	}
	var shown []string
	for _, f := range list.Features {
		if !slices.Contains(shown, f.Project) {
			shown = append(shown, f.Project)
		}
	}
	if err := h.withScopes(r, s, shown, "UPDATE_FEATURE_ENVIRONMENT", "CREATE_FEATURE_STRATEGY"); err != nil {
		h.fail(w, r, s, err)
		return
	}
	data := map[string]any{
		"Flags": list.Features, "Total": list.Total, "Environments": list.Environments, "Projects": list.Projects, "Types": list.Types,
		"Review": review, "From": min(offset+1, list.Total), "To": offset + len(list.Features),
	}
	if offset > 0 {
		data["Prev"] = pageURL(max(offset-flagsPerPage, 0))
	}
	if offset+len(list.Features) < list.Total {
		data["Next"] = pageURL(offset + flagsPerPage)
	}
	h.render(w, r, "flags", page{Title: "Flags", Nav: "flags", Session: s, Data: data})
}

func (h *Handler) newFlag(w http.ResponseWriter, r *http.Request, s *session) {
	var projects struct {
		Projects []named `json:"projects"`
	}
	var types struct {
		Types []named `json:"types"`
	}
	if err := h.call(r, s, "GET", "/api/admin/projects", nil, &projects); err != nil {
		h.fail(w, r, s, err)
		return
	}
	if err := h.call(r, s, "GET", "/api/admin/feature-types", nil, &types); err != nil {
		h.fail(w, r, s, err)
		return
	}
	// Only the projects where the person may create flags are offered.
	ids := make([]string, 0, len(projects.Projects))
	for _, p := range projects.Projects {
		ids = append(ids, p.ID)
	}
	if err := h.withScopes(r, s, ids, "CREATE_FEATURE"); err != nil {
		h.fail(w, r, s, err)
		return
	}
	projects.Projects = slices.DeleteFunc(projects.Projects, func(p named) bool { return !s.CanIn("CREATE_FEATURE", p.ID, "") })
	h.render(w, r, "newflag", page{Title: "New flag", Nav: "new", Session: s, Data: map[string]any{"Projects": projects.Projects, "Types": types.Types}})
}

func (h *Handler) flag(w http.ResponseWriter, r *http.Request, s *session) {
	project, name := r.PathValue("project"), r.PathValue("name")
	base := "/api/admin/projects/" + url.PathEscape(project) + "/features/" + url.PathEscape(name)
	var flag map[string]any
	version, err := h.callETag(r, s, "GET", base, nil, &flag)
	if err != nil {
		var ae *apiError
		if asAPI(err, &ae) && ae.Status == http.StatusNotFound {
			// Archived flags are read from the archive.
			var arch struct {
				Features []map[string]any `json:"features"`
			}
			if h.call(r, s, "GET", "/api/admin/projects/"+url.PathEscape(project)+"/archive", nil, &arch) == nil {
				for _, f := range arch.Features {
					if f["name"] == name {
						flag = f
					}
				}
			}
		}
		if flag == nil {
			h.fail(w, r, s, err)
			return
		}
	}
	var segments struct {
		Segments []map[string]any `json:"segments"`
	}
	var strategies struct {
		Strategies []map[string]any `json:"strategies"`
	}
	var fields []map[string]any
	var tags struct {
		Tags []map[string]any `json:"tags"`
	}
	var tagTypes struct {
		TagTypes []map[string]any `json:"tagTypes"`
	}
	var events struct {
		Events []event `json:"events"`
	}
	var usage map[string]any
	var apps flagApplications
	var types struct {
		Types []named `json:"types"`
	}
	for _, c := range []struct {
		path string
		out  any
	}{
		{"/api/admin/segments", &segments}, {"/api/admin/strategies", &strategies}, {"/api/admin/context", &fields},
		{"/api/admin/features/" + url.PathEscape(name) + "/tags", &tags}, {"/api/admin/tag-types", &tagTypes},
		{"/api/admin/events/" + url.PathEscape(name), &events},
		{"/api/admin/client-metrics/features/" + url.PathEscape(name), &usage}, {"/api/admin/feature-types", &types},
		{"/api/admin/client-metrics/features/" + url.PathEscape(name) + "/applications", &apps},
	} {
		if err := h.call(r, s, "GET", c.path, nil, c.out); err != nil {
			h.fail(w, r, s, err)
			return
		}
	}
	if err := h.withScopes(r, s, []string{project}); err != nil {
		h.fail(w, r, s, err)
		return
	}
	review, err := h.flagReview(r, s, project, name)
	if err != nil {
		h.fail(w, r, s, err)
		return
	}
	// Which tokens can serve the flag: only said to those who may read
	// the tokens.
	var tokens struct {
		Tokens []map[string]any `json:"tokens"`
	}
	if err := h.call(r, s, "GET", "/api/admin/api-tokens", nil, &tokens); err == nil && tokens.Tokens == nil {
		tokens.Tokens = []map[string]any{}
	}
	var envNames []string
	if envs, ok := flag["environments"].([]any); ok {
		for _, e := range envs {
			if m, ok := e.(map[string]any); ok {
				envNames = append(envNames, str(m["name"]))
			}
		}
	}
	segmentNames := map[string]string{}
	for _, sg := range segments.Segments {
		segmentNames[fmt.Sprint(sg["id"])] = fmt.Sprint(sg["name"])
	}
	h.render(w, r, "flag", page{Title: name, Nav: "flags", Session: s, Data: map[string]any{
		"Flag": flag, "Project": project, "Name": name, "API": h.base + base,
		"Segments": segments.Segments, "SegmentNames": segmentNames, "StrategyTypes": strategies.Strategies, "ContextFields": fields,
		"Tags": tags.Tags, "TagTypes": tagTypes.TagTypes, "Events": describeEvents(events.Events, segmentNames), "Operators": operators,
		"Chart": exposureChart(usage), "Applications": apps, "Types": types.Types, "Moves": strategyMoves(flag, h.base+base), "Version": version,
		"Review": review, "Serving": servingTokens(tokens.Tokens, project, envNames),
	}})
}

func asAPI(err error, target **apiError) bool {
	ae, ok := err.(*apiError)
	if ok {
		*target = ae
	}
	return ok
}

// event is one event as the admin API returns it.
type event struct {
	ID          int64           `json:"id"`
	Type        string          `json:"type"`
	CreatedBy   string          `json:"createdBy"`
	CreatedAt   string          `json:"createdAt"`
	FeatureName *string         `json:"featureName"`
	Project     *string         `json:"project"`
	Environment *string         `json:"environment"`
	Data        json.RawMessage `json:"data"`
	PreData     json.RawMessage `json:"preData"`
}

type diffLine struct {
	Op   string // "+", "-" or " "
	Text string
}

// diffJSON shows what changed between two JSON documents as flattened
// path = value lines: removed ones with -, added ones with +.
func diffJSON(pre, post json.RawMessage) []diffLine {
	a, b := flatten(pre), flatten(post)
	keys := map[string]bool{}
	for k := range a {
		keys[k] = true
	}
	for k := range b {
		keys[k] = true
	}
	sorted := make([]string, 0, len(keys))
	for k := range keys {
		sorted = append(sorted, k)
	}
	sort.Strings(sorted)
	var out []diffLine
	for _, k := range sorted {
		av, inA := a[k]
		bv, inB := b[k]
		switch {
		case inA && inB && av == bv:
		case inA && inB:
			out = append(out, diffLine{"-", k + " = " + av}, diffLine{"+", k + " = " + bv})
		case inA:
			out = append(out, diffLine{"-", k + " = " + av})
		default:
			out = append(out, diffLine{"+", k + " = " + bv})
		}
	}
	return out
}

func flatten(raw json.RawMessage) map[string]string {
	out := map[string]string{}
	if len(raw) == 0 || string(raw) == "null" {
		return out
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return out
	}
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch t := v.(type) {
		case map[string]any:
			if len(t) == 0 {
				out[prefix] = "{}"
			}
			for k, x := range t {
				p := k
				if prefix != "" {
					p = prefix + "." + k
				}
				walk(p, x)
			}
		case []any:
			if len(t) == 0 {
				out[prefix] = "[]"
			}
			for i, x := range t {
				walk(fmt.Sprintf("%s[%d]", prefix, i), x)
			}
		default:
			b, _ := json.Marshal(t)
			out[prefix] = string(b)
		}
	}
	walk("", v)
	return out
}

func (h *Handler) events(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	offset, _ := strconv.Atoi(q.Get("offset"))
	body := map[string]any{"limit": 50, "offset": max(offset, 0)}
	for _, k := range []string{"type", "project", "feature", "query"} {
		if v := strings.TrimSpace(q.Get(k)); v != "" {
			body[k] = v
		}
	}
	if u := strings.TrimSpace(q.Get("user")); u != "" {
		body["query"] = strings.TrimSpace(fmt.Sprint(body["query"]) + " " + u)
		if _, had := q["query"]; !had || q.Get("query") == "" {
			body["query"] = u
		}
	}
	var list struct {
		Events      []event `json:"events"`
		TotalEvents int     `json:"totalEvents"`
	}
	if err := h.call(r, s, "POST", "/api/admin/events/search", body, &list); err != nil {
		h.fail(w, r, s, err)
		return
	}
	// The filters offer choices: event types in groups, the projects,
	// and the people (when the visitor may list them).
	var projects struct {
		Projects []named `json:"projects"`
	}
	var segments struct {
		Segments []map[string]any `json:"segments"`
	}
	var users struct {
		Users []map[string]any `json:"users"`
	}
	_ = h.call(r, s, "GET", "/api/admin/projects", nil, &projects)
	_ = h.call(r, s, "GET", "/api/admin/segments", nil, &segments)
	var people []string
	if s.Can("ADMIN") && h.call(r, s, "GET", "/api/admin/user-admin", nil, &users) == nil {
		for _, u := range users.Users {
			if n := str(u["username"]); n != "" {
				people = append(people, n)
			} else if n := str(u["email"]); n != "" {
				people = append(people, n)
			}
		}
		slices.Sort(people)
	}
	segmentNames := map[string]string{}
	for _, sg := range segments.Segments {
		segmentNames[str(sg["id"])] = str(sg["name"])
	}
	data := map[string]any{"Events": describeEvents(list.Events, segmentNames), "Total": list.TotalEvents,
		"TypeGroups": eventTypeGroups(), "Projects": projects.Projects, "People": people}
	if offset+len(list.Events) < list.TotalEvents {
		p := url.Values{}
		for k, v := range q {
			p[k] = v
		}
		p.Set("offset", strconv.Itoa(offset+50))
		data["Next"] = h.base + "/events?" + p.Encode()
	}
	h.render(w, r, "events", page{Title: "Event log", Nav: "events", Session: s, Data: data})
}

// simpleList reads one list endpoint for a page; extras add to the page's
// data.
func (h *Handler) simpleList(name, title, path string, extras ...func(*http.Request, *session, map[string]any) error) func(http.ResponseWriter, *http.Request, *session) {
	return func(w http.ResponseWriter, r *http.Request, s *session) {
		var out any
		if err := h.call(r, s, "GET", path, nil, &out); err != nil {
			h.fail(w, r, s, err)
			return
		}
		var projects struct {
			Projects []named `json:"projects"`
		}
		_ = h.call(r, s, "GET", "/api/admin/projects", nil, &projects)
		data := map[string]any{"List": out, "Projects": projects.Projects, "Operators": operators}
		for _, extra := range extras {
			if err := extra(r, s, data); err != nil {
				h.fail(w, r, s, err)
				return
			}
		}
		h.render(w, r, name, page{Title: title, Nav: name, Session: s, Data: data})
	}
}

// builtInContextFields are the fields the SDKs fill in themselves: the
// page marks them instead of offering to delete them (the API still lets
// an admin delete one, as Unleash does).
var builtInContextFields = []string{"appName", "currentTime", "environment", "remoteAddress", "sessionId", "userId"}

// contextUse is one place a context field is used.
type contextUse struct {
	What string // "flag" or "segment"
	Name string
	Env  string
	Link string
}

// contextUses adds, by field name, where each listed field is used
// (Uses: strategies of flags, then segments) and which are built in
// (BuiltIn), so the page offers Delete only for an unused custom field.
func (h *Handler) contextUses(r *http.Request, s *session, data map[string]any) error {
	list, _ := data["List"].([]any)
	var segments struct {
		Segments []struct {
			ID          int    `json:"id"`
			Name        string `json:"name"`
			Constraints []struct {
				ContextName string `json:"contextName"`
			} `json:"constraints"`
		} `json:"segments"`
	}
	if err := h.call(r, s, "GET", "/api/admin/segments", nil, &segments); err != nil {
		return err
	}
	uses := map[string][]contextUse{}
	builtIn := map[string]bool{}
	for _, item := range list {
		name, _ := item.(map[string]any)["name"].(string)
		builtIn[name] = slices.Contains(builtInContextFields, name)
		var st struct {
			Strategies []struct {
				ProjectID   string `json:"projectId"`
				FeatureName string `json:"featureName"`
				Environment string `json:"environment"`
			} `json:"strategies"`
		}
		if err := h.call(r, s, "GET", "/api/admin/context/"+url.PathEscape(name)+"/strategies", nil, &st); err != nil {
			return err
		}
		for _, u := range st.Strategies {
			uses[name] = append(uses[name], contextUse{What: "flag", Name: u.FeatureName, Env: u.Environment,
				Link: "/projects/" + url.PathEscape(u.ProjectID) + "/flags/" + url.PathEscape(u.FeatureName) + "#env-" + u.Environment})
		}
		for _, sg := range segments.Segments {
			for _, c := range sg.Constraints {
				if c.ContextName == name {
					uses[name] = append(uses[name], contextUse{What: "segment", Name: sg.Name, Link: "/segments#edit-segment-" + fmt.Sprint(sg.ID)})
					break
				}
			}
		}
	}
	data["Uses"], data["BuiltIn"] = uses, builtIn
	return nil
}

// segmentVersions adds each listed segment's version (Versions, by id),
// which the page's changes to it send as If-Match.
func (h *Handler) segmentVersions(r *http.Request, s *session, data map[string]any) error {
	list, _ := data["List"].(map[string]any)
	segments, _ := list["segments"].([]any)
	versions := map[string]string{}
	for _, sg := range segments {
		id := fmt.Sprint(sg.(map[string]any)["id"])
		v, err := h.callETag(r, s, "GET", "/api/admin/segments/"+url.PathEscape(id), nil, nil)
		if err != nil {
			return err
		}
		versions[id] = v
	}
	data["Versions"] = versions
	return nil
}

func (h *Handler) tokens(w http.ResponseWriter, r *http.Request, s *session) {
	var tokens struct {
		Tokens []map[string]any `json:"tokens"`
	}
	var envs struct {
		Environments []named `json:"environments"`
	}
	var projects struct {
		Projects []named `json:"projects"`
	}
	var denied string
	if err := h.call(r, s, "GET", "/api/admin/api-tokens", nil, &tokens); err != nil {
		var ae *apiError
		if !asAPI(err, &ae) || ae.Status != http.StatusForbidden {
			h.fail(w, r, s, err)
			return
		}
		denied = ae.Message
	}
	_ = h.call(r, s, "GET", "/api/admin/environments", nil, &envs)
	_ = h.call(r, s, "GET", "/api/admin/projects", nil, &projects)
	h.render(w, r, "tokens", page{Title: "API tokens", Nav: "tokens", Session: s, Data: map[string]any{
		"Tokens": tokens.Tokens, "Denied": denied, "Environments": envs.Environments, "Projects": projects.Projects}})
}

// account shows the signed-in person's password form, personal access
// tokens and sessions.
func (h *Handler) account(w http.ResponseWriter, r *http.Request, s *session) {
	var pats struct {
		PATs []map[string]any `json:"pats"`
	}
	if err := h.call(r, s, "GET", "/api/admin/user/tokens", nil, &pats); err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, "account", page{Title: "Your account", Nav: "account", Session: s, Data: map[string]any{"Tokens": pats.PATs}})
}

func (h *Handler) projects(w http.ResponseWriter, r *http.Request, s *session) {
	var projects struct {
		Projects []map[string]any `json:"projects"`
	}
	var envs struct {
		Environments []map[string]any `json:"environments"`
	}
	if err := h.call(r, s, "GET", "/api/admin/projects", nil, &projects); err != nil {
		h.fail(w, r, s, err)
		return
	}
	if err := h.call(r, s, "GET", "/api/admin/environments", nil, &envs); err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, "projects", page{Title: "Projects and environments", Nav: "projects", Session: s, Data: map[string]any{"Projects": projects.Projects, "Environments": envs.Environments}})
}

func (h *Handler) users(w http.ResponseWriter, r *http.Request, s *session) {
	var users struct {
		Users []map[string]any `json:"users"`
	}
	var accounts struct {
		ServiceAccounts []map[string]any `json:"serviceAccounts"`
		RootRoles       []struct {
			ID   int    `json:"id"`
			Name string `json:"name"`
		} `json:"rootRoles"`
	}
	for path, out := range map[string]any{"/api/admin/user-admin": &users, "/api/admin/service-account": &accounts} {
		if err := h.call(r, s, "GET", path, nil, out); err != nil {
			h.fail(w, r, s, err)
			return
		}
	}
	for _, a := range append(accounts.ServiceAccounts, users.Users...) { // the API gives the role's id
		for _, role := range accounts.RootRoles {
			if id, ok := a["rootRole"].(float64); ok && int(id) == role.ID {
				a["roleName"] = role.Name
			}
		}
	}
	h.render(w, r, "users", page{Title: "Users", Nav: "users", Session: s, Data: map[string]any{
		"Users": users.Users, "ServiceAccounts": accounts.ServiceAccounts, "Roles": accounts.RootRoles}})
}

// bar is one bar of the exposure chart.
type bar struct {
	X, YesH, NoH, YesY, NoY int
	Label                   string
	Title                   string
}

// exposureChart turns the client metrics answer (rows per hour,
// environment and application, newest first) into SVG bars per hour,
// oldest first: yes stacked on no.
func exposureChart(usage map[string]any) map[string]any {
	rows, _ := usage["data"].([]any)
	type point struct {
		label   string
		yes, no int
	}
	byHour := map[string]*point{}
	var order []string
	apps := map[string]bool{}
	for _, b := range rows {
		m, _ := b.(map[string]any)
		if m == nil {
			continue
		}
		yes, _ := m["yes"].(float64)
		no, _ := m["no"].(float64)
		label := formatTime(fmt.Sprint(m["timestamp"]))
		if app, ok := m["appName"].(string); ok && app != "" {
			apps[app] = true
		}
		p := byHour[label]
		if p == nil {
			p = &point{label: label}
			byHour[label] = p
			order = append(order, label)
		}
		p.yes += int(yes)
		p.no += int(no)
	}
	maxN := 1
	for _, p := range byHour {
		maxN = max(maxN, p.yes+p.no)
	}
	const height, width = 120, 12
	bars := make([]bar, 0, len(order))
	for i := len(order) - 1; i >= 0; i-- {
		p := byHour[order[i]]
		yh := p.yes * height / maxN
		nh := p.no * height / maxN
		bars = append(bars, bar{X: len(bars) * (width + 2), YesH: yh, NoH: nh, NoY: height - nh, YesY: height - nh - yh, Label: p.label,
			Title: fmt.Sprintf("%s: %d yes, %d no", p.label, p.yes, p.no)})
	}
	appList := make([]string, 0, len(apps))
	for a := range apps {
		appList = append(appList, a)
	}
	sort.Strings(appList)
	return map[string]any{"Bars": bars, "Width": max(len(bars)*(width+2), 100), "Height": height, "Max": maxN, "Apps": appList,
		"LastSeen": usage["lastSeenAt"]}
}
