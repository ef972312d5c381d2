package domain

import (
	"context"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

var systemUserID = int64(-1337)

// SystemActor is who the server itself acts as (Unleash's system user).
var SystemActor = store.Actor{Name: "unleash_system_user", UserID: &systemUserID}

// CheckStaleness compares every live, non-stale flag's age with its type's
// lifetime and stores the result. Flags that become potentially stale get a
// feature-potentially-stale-on event (written by the system user, in the
// same transaction); flags that stop being potentially stale (their type's
// lifetime grew) are unmarked without an event, as in Unleash. It returns
// how many flags were newly marked.
func CheckStaleness(ctx context.Context, st *store.Store) (int, error) {
	changes, err := st.Q(ctx).PotentiallyStaleChanges(st.Now())
	if err != nil || len(changes) == 0 {
		return 0, err
	}
	marked := 0
	err = st.Tx(ctx, func(tx *store.Tx) error {
		marked = 0 // the store may run this function again (a PostgreSQL deadlock)
		for _, c := range changes {
			if !c.PotentiallyStale {
				continue
			}
			changed, err := tx.SetPotentiallyStale(c.Name, true)
			if err != nil {
				return err
			}
			if !changed {
				continue // another instance marked it
			}
			marked++
			if err := tx.Event(store.NewEvent{Type: "feature-potentially-stale-on", Actor: SystemActor, FeatureName: c.Name, Project: c.Project}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, c := range changes {
		if !c.PotentiallyStale {
			// A derived mark, not a change anyone made: stored outside the
			// event log, like Unleash's scheduler does.
			if _, err := st.Q(ctx).SetPotentiallyStale(c.Name, false); err != nil {
				return marked, err
			}
		}
	}
	return marked, nil
}

// setStale marks a flag stale or not and writes feature-stale-on/off when
// the mark changes.
func setStale(tx *store.Tx, p *Principal, f store.Feature, stale bool) error {
	if f.Archived {
		return ArchivedError()
	}
	changed, err := tx.SetStale(f.Name, stale)
	if err != nil || !changed {
		return err
	}
	event := "feature-stale-off"
	if stale {
		event = "feature-stale-on"
	}
	return tx.Event(store.NewEvent{Type: event, Actor: p.Actor(), FeatureName: f.Name, Project: f.Project})
}

// MarkStale marks some flags of a project stale or not stale as p, all or
// none, with an event for each that changed.
func MarkStale(tx *store.Tx, p *Principal, project string, features []string, value *bool) error {
	if err := p.Require(PermUpdateFeature, project, ""); err != nil {
		return err
	}
	if value == nil {
		return apierr.Validation("The `value` property is required. It was not present on the data you sent.")
	}
	if len(features) == 0 {
		return apierr.Validation("The `features` property must list at least one flag.")
	}
	for _, name := range features {
		f, err := tx.FeatureInProject(project, name)
		if err != nil {
			return err
		}
		if err := setStale(tx, p, f, *value); err != nil {
			return err
		}
	}
	return nil
}

// SetFeatureStale marks one flag stale or not as p and returns it.
func SetFeatureStale(tx *store.Tx, p *Principal, name string, stale bool) (store.Feature, error) {
	f, err := p.RequireOnFlag(tx.Q, PermUpdateFeature, name)
	if err != nil {
		return f, err
	}
	if err := setStale(tx, p, f, stale); err != nil {
		return f, err
	}
	return tx.Feature(f.Name)
}
