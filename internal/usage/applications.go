package usage

import (
	"context"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// ApplicationList is GET /api/admin/metrics/applications: a page of the
// applications, in Unleash's applicationsSchema.
type ApplicationList struct {
	Total        int                        `json:"total"`
	Applications []store.ApplicationSummary `json:"applications"`
}

// Applications returns a page of the applications.
func (s *Service) Applications(ctx context.Context, q store.ApplicationQuery) (ApplicationList, error) {
	apps, total, err := s.store.Q(ctx).Applications(q)
	return ApplicationList{Total: total, Applications: apps}, err
}

// ApplicationDetails is GET /api/admin/metrics/applications/{appName}, as
// Unleash answers it: the application, the strategies its instances
// registered with, its instances not yet stale, and the flags it reported
// in the last day.
type ApplicationDetails struct {
	AppName     string                      `json:"appName"`
	CreatedAt   time.Time                   `json:"createdAt"`
	Strategies  []ApplicationStrategy       `json:"strategies"`
	Instances   []store.ApplicationInstance `json:"instances"`
	SeenToggles []SeenFlag                  `json:"seenToggles"`
	Links       struct {
		Self string `json:"self"`
	} `json:"links"`
}

// ApplicationStrategy is a strategy an application registered with: the
// strategy type, or only its name and notFound when the server has no
// strategy of that name.
type ApplicationStrategy struct {
	Name        string                    `json:"name"`
	DisplayName *string                   `json:"displayName,omitempty"`
	Description *string                   `json:"description,omitempty"`
	Editable    *bool                     `json:"editable,omitempty"`
	Deprecated  *bool                     `json:"deprecated,omitempty"`
	Parameters  []store.StrategyParameter `json:"parameters,omitempty"`
	NotFound    bool                      `json:"notFound,omitempty"`
}

// SeenFlag is a flag an application reported: the flag, or only its name
// and notFound when it no longer exists.
type SeenFlag struct {
	Name           string     `json:"name"`
	Project        string     `json:"project,omitempty"`
	Type           string     `json:"type,omitempty"`
	Description    *string    `json:"description,omitempty"`
	Stale          *bool      `json:"stale,omitempty"`
	ImpressionData *bool      `json:"impressionData,omitempty"`
	CreatedAt      *time.Time `json:"createdAt,omitempty"`
	LastSeenAt     *time.Time `json:"lastSeenAt,omitempty"`
	NotFound       bool       `json:"notFound,omitempty"`
}

// seenFlagsWindow is how far back an application's flags are looked for
// (Unleash: 24 hours).
const seenFlagsWindow = 24 * time.Hour

// Application returns an application's details (404 for a name never seen).
func (s *Service) Application(ctx context.Context, name string) (ApplicationDetails, error) {
	q := s.store.Q(ctx)
	now := s.store.Now()
	app, err := q.Application(name, now.Add(-s.cfg.InstanceStaleAfter))
	if apierr.IsKind(err, apierr.KindNotFound) {
		return ApplicationDetails{}, apierr.NotFound("Could not find appName=%s", name)
	}
	if err != nil {
		return ApplicationDetails{}, err
	}
	d := ApplicationDetails{AppName: app.AppName, CreatedAt: app.CreatedAt, Instances: app.Instances,
		Strategies: []ApplicationStrategy{}, SeenToggles: []SeenFlag{}}
	d.Links.Self = "/api/applications/" + app.AppName
	types, err := q.StrategyTypes()
	if err != nil {
		return d, err
	}
	for _, n := range app.Strategies {
		st := ApplicationStrategy{Name: n, NotFound: true}
		for _, t := range types {
			if t.Name == n {
				st = ApplicationStrategy{Name: n, DisplayName: t.DisplayName, Description: t.Description,
					Editable: &t.Editable, Deprecated: &t.Deprecated, Parameters: t.Parameters}
			}
		}
		d.Strategies = append(d.Strategies, st)
	}
	names, err := q.FlagsReportedBy(name, now.Add(-seenFlagsWindow).Truncate(time.Hour))
	if err != nil {
		return d, err
	}
	for _, n := range names {
		f, err := q.Feature(n)
		switch {
		case apierr.IsKind(err, apierr.KindNotFound):
			d.SeenToggles = append(d.SeenToggles, SeenFlag{Name: n, NotFound: true})
		case err != nil:
			return d, err
		default:
			d.SeenToggles = append(d.SeenToggles, SeenFlag{Name: f.Name, Project: f.Project, Type: f.Type, Description: f.Description,
				Stale: &f.Stale, ImpressionData: &f.ImpressionData, CreatedAt: &f.CreatedAt, LastSeenAt: f.LastSeenAt})
		}
	}
	return d, nil
}

// FlagApplications is which applications asked for a flag, and with
// which SDK versions, in the last hour and in the last day.
type FlagApplications struct {
	FeatureName string                  `json:"featureName"`
	LastHour    []store.FlagApplication `json:"lastHour"`
	LastDay     []store.FlagApplication `json:"lastDay"`
}

// FlagApplications returns the applications that reported a flag's usage
// in the last hour and the last day (hourly buckets that start within
// them), with the SDK versions of their instances that are not stale.
func (s *Service) FlagApplications(ctx context.Context, feature string) (FlagApplications, error) {
	q := s.store.Q(ctx)
	if _, err := q.Feature(feature); err != nil {
		return FlagApplications{}, err
	}
	now := s.store.Now()
	seenSince := now.Add(-s.cfg.InstanceStaleAfter)
	out := FlagApplications{FeatureName: feature}
	var err error
	if out.LastHour, err = q.FlagApplications(feature, now.Add(-time.Hour), seenSince); err != nil {
		return out, err
	}
	out.LastDay, err = q.FlagApplications(feature, now.Add(-24*time.Hour), seenSince)
	return out, err
}
