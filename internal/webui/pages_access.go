package webui

import (
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
)

// The access screens: groups, roles (with their permissions as grouped
// checkboxes) and a project's Access tab, all read through the admin
// API's access routes; changes are made by the browser calling them.

// accessRoutes registers the access screens and the password link page.
func (h *Handler) accessRoutes() {
	m := h.mux
	m.HandleFunc("GET /groups", h.withSession(h.groups))
	m.HandleFunc("GET /roles", h.withSession(h.roles))
	m.HandleFunc("GET /projects/{project}/access", h.withSession(h.projectAccess))
	m.HandleFunc("GET /reset-password", h.resetPassword)
}

// roleRef is a role as the role lists give it.
type roleRef struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
}

// permissionRef is one permission as the roles screen shows it.
type permissionRef struct {
	Name        string  `json:"name"`
	DisplayName string  `json:"displayName"`
	Type        string  `json:"type"`
	Category    string  `json:"category"`
	Environment *string `json:"environment"`
}

// permissionGroup is one group of checkboxes.
type permissionGroup struct {
	Label       string
	Environment string
	Permissions []permissionRef
}

func groupPermissions(perms []permissionRef, env string) []permissionGroup {
	var out []permissionGroup
	for _, p := range perms {
		label := p.Category
		if env != "" {
			label = env
		}
		if len(out) == 0 || out[len(out)-1].Label != label {
			out = append(out, permissionGroup{Label: label, Environment: env})
		}
		out[len(out)-1].Permissions = append(out[len(out)-1].Permissions, p)
	}
	return out
}

func (h *Handler) groups(w http.ResponseWriter, r *http.Request, s *session) {
	var groups struct {
		Groups []map[string]any `json:"groups"`
	}
	var people struct {
		Users []map[string]any `json:"users"`
	}
	var roles struct {
		Roles []roleRef `json:"roles"`
	}
	for path, out := range map[string]any{"/api/admin/groups": &groups, "/api/admin/user-admin/access": &people, "/api/admin/roles": &roles} {
		if err := h.call(r, s, "GET", path, nil, out); err != nil {
			h.fail(w, r, s, err)
			return
		}
	}
	roots := slices.DeleteFunc(roles.Roles, func(r roleRef) bool { return r.Type != "root" && r.Type != "root-custom" })
	for _, g := range groups.Groups {
		g["memberIds"], g["roleName"] = []string{}, ""
		var sso, projects []string
		for _, m := range asList(g["mappingsSSO"]) {
			sso = append(sso, fmt.Sprint(m))
		}
		for _, p := range asList(g["projects"]) {
			projects = append(projects, fmt.Sprint(p))
		}
		g["ssoText"], g["projectsText"] = strings.Join(sso, ", "), strings.Join(projects, ", ")
		if users, ok := g["users"].([]any); ok {
			for _, u := range users {
				if m, ok := u.(map[string]any)["user"].(map[string]any); ok {
					g["memberIds"] = append(g["memberIds"].([]string), strconv.FormatFloat(m["id"].(float64), 'f', -1, 64))
				}
			}
		}
		for _, role := range roots {
			if id, ok := g["rootRole"].(float64); ok && int64(id) == role.ID {
				g["roleName"] = role.Name
			}
		}
	}
	h.render(w, r, "groups", page{Title: "Groups", Nav: "groups", Session: s, Data: map[string]any{
		"Groups": groups.Groups, "People": people.Users, "Roles": roots}})
}

// roleView is a role with what it holds, for the roles screen.
type roleView struct {
	roleRef
	Permissions []permissionRef `json:"permissions"`
	// Held says which checkboxes are ticked: "NAME" or "NAME@env".
	Held map[string]bool
}

func (h *Handler) roles(w http.ResponseWriter, r *http.Request, s *session) {
	var roles struct {
		Roles []roleRef `json:"roles"`
	}
	var perms struct {
		Permissions struct {
			Root         []permissionRef `json:"root"`
			Project      []permissionRef `json:"project"`
			Environments []struct {
				Name        string          `json:"name"`
				Permissions []permissionRef `json:"permissions"`
			} `json:"environments"`
		} `json:"permissions"`
	}
	for path, out := range map[string]any{"/api/admin/roles": &roles, "/api/admin/permissions": &perms} {
		if err := h.call(r, s, "GET", path, nil, out); err != nil {
			h.fail(w, r, s, err)
			return
		}
	}
	views := make([]roleView, 0, len(roles.Roles))
	for _, role := range roles.Roles {
		v := roleView{Held: map[string]bool{}}
		if err := h.call(r, s, "GET", "/api/admin/roles/"+strconv.FormatInt(role.ID, 10), nil, &v); err != nil {
			h.fail(w, r, s, err)
			return
		}
		v.roleRef = role
		for _, p := range v.Permissions {
			key := p.Name
			if p.Environment != nil {
				key += "@" + *p.Environment
			}
			v.Held[key] = true
		}
		views = append(views, v)
	}
	var envGroups []permissionGroup
	for _, e := range perms.Permissions.Environments {
		envGroups = append(envGroups, groupPermissions(e.Permissions, e.Name)...)
	}
	h.render(w, r, "roles", page{Title: "Roles", Nav: "roles", Session: s, Data: map[string]any{
		"Roles": views, "Root": groupPermissions(perms.Permissions.Root, ""), "Project": groupPermissions(perms.Permissions.Project, ""),
		"Environments": envGroups}})
}

func (h *Handler) projectAccess(w http.ResponseWriter, r *http.Request, s *session) {
	project := r.PathValue("project")
	var proj map[string]any
	if err := h.call(r, s, "GET", "/api/admin/projects/"+url.PathEscape(project), nil, &proj); err != nil {
		h.fail(w, r, s, err)
		return
	}
	if err := h.withScopes(r, s, []string{project}); err != nil {
		h.fail(w, r, s, err)
		return
	}
	data := map[string]any{"Project": project, "Info": proj}
	if s.CanIn("PROJECT_USER_ACCESS_READ", project, "") {
		var acc map[string]any
		if err := h.call(r, s, "GET", "/api/admin/projects/"+url.PathEscape(project)+"/access", nil, &acc); err != nil {
			h.fail(w, r, s, err)
			return
		}
		data["Access"] = acc
		for _, kind := range []string{"users", "groups"} {
			list, _ := acc[kind].([]any)
			for _, m := range list {
				member := m.(map[string]any)
				var ids []string
				roles, _ := member["roles"].([]any)
				for _, id := range roles {
					ids = append(ids, strconv.FormatFloat(id.(float64), 'f', -1, 64))
				}
				member["roleIds"] = ids
			}
		}
		if s.CanIn("PROJECT_USER_ACCESS_WRITE", project, "") {
			var people map[string]any
			if err := h.call(r, s, "GET", "/api/admin/user-admin/access", nil, &people); err != nil {
				h.fail(w, r, s, err)
				return
			}
			data["People"] = people
		}
	}
	h.render(w, r, "access", page{Title: "Access to " + project, Nav: "projects", Session: s, Data: data})
}

// resetPassword is the page a one-time password link opens.
func (h *Handler) resetPassword(w http.ResponseWriter, r *http.Request) {
	token := r.URL.Query().Get("token")
	var who map[string]any
	err := h.call(r, nil, "GET", "/auth/reset/validate?token="+url.QueryEscape(token), nil, &who)
	data := map[string]any{"Token": token, "Who": who}
	if err != nil {
		var ae *apiError
		if asAPI(err, &ae) {
			data["Error"] = ae.Message
		} else {
			h.fail(w, r, nil, err)
			return
		}
	}
	h.render(w, r, "reset", page{Title: "Set your password", Data: data})
}

// asList is a JSON array decoded into any (nil for anything else).
func asList(v any) []any {
	l, _ := v.([]any)
	return l
}
