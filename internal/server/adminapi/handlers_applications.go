package adminapi

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

func (s *API) featureUsage(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	name := r.PathValue("featureName")
	f, err := q.Feature(name)
	if err != nil {
		return err
	}
	hours := 48
	if v := r.URL.Query().Get("hoursBack"); v != "" {
		if hours, err = strconv.Atoi(v); err != nil || hours < 1 || hours > 24*90 {
			return apierr.Validation("The `hoursBack` query parameter must be a number of hours between 1 and 2160.")
		}
	}
	rows, err := q.FeatureUsage(name, s.store.Now().Add(-time.Duration(hours)*time.Hour).Truncate(time.Hour))
	if err != nil {
		return err
	}
	envs, err := q.FeatureEnvironments(name)
	if err != nil {
		return err
	}
	lastSeen := map[string]*time.Time{}
	for _, fe := range envs {
		lastSeen[fe.Environment] = fe.LastSeenAt
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "maturity": "stable", "featureName": name,
		"lastSeenAt": f.LastSeenAt, "environments": lastSeen, "data": rows})
}

// listApplications answers a page of the applications. Like Unleash, it
// reads query (comma-separated texts, any of which the name holds), offset,
// limit (1–1000, default 1000) and sortOrder (asc or desc), and takes a
// value it cannot use as the default.
func (s *API) listApplications(w http.ResponseWriter, r *http.Request) error {
	v := r.URL.Query()
	q := store.ApplicationQuery{Limit: 1000, Descending: v.Get("sortOrder") == "desc"}
	for _, t := range strings.Split(v.Get("query"), ",") {
		if t = strings.TrimSpace(t); t != "" {
			q.Search = append(q.Search, t)
		}
	}
	if n, err := strconv.Atoi(v.Get("limit")); err == nil && n > 0 && n <= 1000 {
		q.Limit = n
	}
	if n, err := strconv.Atoi(v.Get("offset")); err == nil && n > 0 {
		q.Offset = n
	}
	list, err := s.usage.Applications(r.Context(), q)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, list)
}

// getApplication answers an application with its instances and the flags
// it reported.
func (s *API) getApplication(w http.ResponseWriter, r *http.Request) error {
	app, err := s.usage.Application(r.Context(), r.PathValue("appName"))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, app)
}

// flagApplications answers which applications, with which SDK versions,
// asked for a flag in the last hour and day.
func (s *API) flagApplications(w http.ResponseWriter, r *http.Request) error {
	apps, err := s.usage.FlagApplications(r.Context(), r.PathValue("featureName"))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, apps)
}
