package webui

import (
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// applicationsPerPage is the page size of the applications list.
const applicationsPerPage = 50

// applications lists the applications SDKs reported as, with a search
// (htmx, as the flags list) and pages.
func (h *Handler) applications(w http.ResponseWriter, r *http.Request, s *session) {
	q := r.URL.Query()
	offset, _ := strconv.Atoi(q.Get("offset"))
	offset = max(offset, 0)
	params := url.Values{"offset": {strconv.Itoa(offset)}, "limit": {strconv.Itoa(applicationsPerPage)}}
	search := strings.TrimSpace(q.Get("query"))
	if search != "" {
		params.Set("query", search)
	}
	var list struct {
		Total        int `json:"total"`
		Applications []struct {
			AppName    string   `json:"appName"`
			CreatedAt  string   `json:"createdAt"`
			Strategies []string `json:"strategies"`
			Usage      []struct {
				Project      string   `json:"project"`
				Environments []string `json:"environments"`
			} `json:"usage"`
		} `json:"applications"`
	}
	if err := h.call(r, s, "GET", "/api/admin/metrics/applications?"+params.Encode(), nil, &list); err != nil {
		h.fail(w, r, s, err)
		return
	}
	pageURL := func(off int) string {
		p := url.Values{"offset": {strconv.Itoa(off)}}
		if search != "" {
			p.Set("query", search)
		}
		return h.base + "/applications?" + p.Encode()
	}
	data := map[string]any{"Applications": list.Applications, "Total": list.Total,
		"From": min(offset+1, list.Total), "To": offset + len(list.Applications)}
	if offset > 0 {
		data["Prev"] = pageURL(max(offset-applicationsPerPage, 0))
	}
	if offset+len(list.Applications) < list.Total {
		data["Next"] = pageURL(offset + applicationsPerPage)
	}
	h.render(w, r, "applications", page{Title: "Applications", Nav: "applications", Session: s, Data: data})
}

// application shows one application: its instances (SDK, environment,
// last seen), the strategies they registered and the flags it reported.
func (h *Handler) application(w http.ResponseWriter, r *http.Request, s *session) {
	name := r.PathValue("appName")
	var app struct {
		AppName    string `json:"appName"`
		CreatedAt  string `json:"createdAt"`
		Strategies []struct {
			Name     string `json:"name"`
			NotFound bool   `json:"notFound"`
		} `json:"strategies"`
		Instances []struct {
			InstanceID  string  `json:"instanceId"`
			SDKVersion  *string `json:"sdkVersion"`
			SDKType     *string `json:"sdkType"`
			ClientIP    *string `json:"clientIp"`
			Environment string  `json:"environment"`
			LastSeen    string  `json:"lastSeen"`
		} `json:"instances"`
		SeenToggles []struct {
			Name     string `json:"name"`
			Project  string `json:"project"`
			NotFound bool   `json:"notFound"`
		} `json:"seenToggles"`
	}
	if err := h.call(r, s, "GET", "/api/admin/metrics/applications/"+url.PathEscape(name), nil, &app); err != nil {
		h.fail(w, r, s, err)
		return
	}
	h.render(w, r, "application", page{Title: name, Nav: "applications", Session: s, Data: app})
}

// flagApplications is which applications, with which SDK versions, asked
// for a flag in the last hour and day (the flag page's Applications).
type flagApplications struct {
	LastHour []flagApplication `json:"lastHour"`
	LastDay  []flagApplication `json:"lastDay"`
}

type flagApplication struct {
	AppName     string   `json:"appName"`
	Environment string   `json:"environment"`
	SDKVersions []string `json:"sdkVersions"`
	Yes         int64    `json:"yes"`
	No          int64    `json:"no"`
}
