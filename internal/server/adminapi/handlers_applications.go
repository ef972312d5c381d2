package adminapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
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

func (s *API) listApplications(w http.ResponseWriter, r *http.Request) error {
	apps, err := s.store.Q(r.Context()).Applications()
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"applications": apps})
}
