package domain_test

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

func principal(role int64) *domain.Principal {
	id := int64(7)
	return &domain.Principal{Kind: domain.KindUser, Name: "svc-" + strconv.FormatInt(role, 10), UserID: &id, RootRole: role}
}

func eventCount(t *testing.T, st *store.Store) int {
	t.Helper()
	var n int
	if err := st.DB().QueryRow(`SELECT COUNT(*) FROM events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func eventTypes(t *testing.T, st *store.Store, feature string) []string {
	t.Helper()
	events, _, err := st.Q(context.Background()).Events(store.EventFilter{Feature: feature, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for i := len(events) - 1; i >= 0; i-- { // oldest first
		out = append(out, events[i].Type)
	}
	return out
}

// TestSetEnabledGivesADefaultStrategyOnce checks the one on/off rule that
// the admin API and signal actions share: turning a flag on in an
// environment without strategies adds a 100% gradual rollout and its
// event, then the enabled event; turning it on again changes nothing.
func TestSetEnabledGivesADefaultStrategyOnce(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		st := servertest.OpenStore(t, db)
		ctx := context.Background()
		editor := principal(domain.RoleEditor)
		run := func(op func(tx *store.Tx) error) error { return st.Tx(ctx, op) }
		if err := run(func(tx *store.Tx) error {
			_, err := domain.CreateFeature(tx, editor, "default", domain.CreateFeatureInput{Name: "checkout"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		for range 2 {
			if err := run(func(tx *store.Tx) error {
				_, _, err := domain.SetEnabled(tx, editor, "default", "checkout", "production", true, false)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		strategies, err := st.Q(ctx).Strategies("checkout", "production")
		if err != nil {
			t.Fatal(err)
		}
		if len(strategies) != 1 || strategies[0].Name != "flexibleRollout" || strategies[0].Parameters["rollout"] != "100" ||
			strategies[0].Parameters["groupId"] != "checkout" {
			t.Fatalf("strategies: %+v", strategies)
		}
		want := []string{"feature-created", "feature-strategy-add", "feature-environment-enabled"}
		if got := eventTypes(t, st, "checkout"); !equal(got, want) {
			t.Fatalf("events %v, want %v", got, want)
		}
		// Turning it off and on again keeps the strategy: no second default.
		for _, on := range []bool{false, true} {
			if err := run(func(tx *store.Tx) error {
				_, _, err := domain.SetEnabled(tx, editor, "default", "checkout", "production", on, false)
				return err
			}); err != nil {
				t.Fatal(err)
			}
		}
		if strategies, _ := st.Q(ctx).Strategies("checkout", "production"); len(strategies) != 1 {
			t.Fatalf("%d strategies after off and on", len(strategies))
		}
	})
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestOperationsCheckThePermission calls every changing operation as a
// Viewer (who holds no permission) and without a principal: each is
// refused with 403 or 401 before it changes anything, so a caller that is
// not an HTTP route (signal actions, the web UI) cannot skip the check.
func TestOperationsCheckThePermission(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		st := servertest.OpenStore(t, db)
		ctx := context.Background()
		admin := principal(domain.RoleAdmin)
		if err := st.Tx(ctx, func(tx *store.Tx) error {
			_, err := domain.CreateFeature(tx, admin, "default", domain.CreateFeatureInput{Name: "f1"})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		yes, role := true, json.RawMessage(`"Viewer"`)
		ops := map[string]func(tx *store.Tx, p *domain.Principal) error{
			"SetEnabled": func(tx *store.Tx, p *domain.Principal) error {
				_, _, err := domain.SetEnabled(tx, p, "default", "f1", "production", true, false)
				return err
			},
			"SetEnabledBulk": func(tx *store.Tx, p *domain.Principal) error {
				return domain.SetEnabledBulk(tx, p, "default", "production", []string{"f1"}, true, false)
			},
			"SetVariants": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.SetVariants(tx, p, "default", "f1", "production", nil)
				return err
			},
			"AddStrategy": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.AddStrategy(tx, p, "default", "f1", "production", domain.StrategyInput{Name: "default"})
				return err
			},
			"UpdateStrategy": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.UpdateStrategy(tx, p, "default", "f1", "production", "x", domain.StrategyInput{Name: "default"})
				return err
			},
			"PatchStrategy": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.PatchStrategy(tx, p, "default", "f1", "production", "x", nil)
				return err
			},
			"DeleteStrategy": func(tx *store.Tx, p *domain.Principal) error {
				return domain.DeleteStrategy(tx, p, "default", "f1", "production", "x")
			},
			"ReorderStrategies": func(tx *store.Tx, p *domain.Principal) error {
				return domain.ReorderStrategies(tx, p, "default", "f1", "production", nil)
			},
			"CreateFeature": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.CreateFeature(tx, p, "default", domain.CreateFeatureInput{Name: "f2"})
				return err
			},
			"UpdateFeature": func(tx *store.Tx, p *domain.Principal) error {
				return domain.UpdateFeature(tx, p, "default", "f1", domain.UpdateFeatureInput{Stale: &yes})
			},
			"PatchFeature": func(tx *store.Tx, p *domain.Principal) error { return domain.PatchFeature(tx, p, "default", "f1", nil) },
			"ArchiveFeature": func(tx *store.Tx, p *domain.Principal) error {
				return domain.ArchiveFeature(tx, p, "default", "f1")
			},
			"ReviveFeature": func(tx *store.Tx, p *domain.Principal) error { return domain.ReviveFeature(tx, p, "f1") },
			"DeleteFeature": func(tx *store.Tx, p *domain.Principal) error { return domain.DeleteFeature(tx, p, "f1") },
			"CloneFeature": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.CloneFeature(tx, p, "default", "f1", domain.CloneFeatureInput{Name: "f3"})
				return err
			},
			"MarkStale": func(tx *store.Tx, p *domain.Principal) error {
				return domain.MarkStale(tx, p, "default", []string{"f1"}, &yes)
			},
			"SetFeatureStale": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.SetFeatureStale(tx, p, "f1", true)
				return err
			},
			"AddDependency": func(tx *store.Tx, p *domain.Principal) error {
				return domain.AddDependency(tx, p, "default", "f1", domain.DependencyInput{Feature: "f0"})
			},
			"DeleteDependencies": func(tx *store.Tx, p *domain.Principal) error {
				return domain.DeleteDependencies(tx, p, "default", "f1")
			},
			"CreateEnvironment": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.CreateEnvironment(tx, p, domain.EnvironmentInput{Name: "qa", Type: "test"})
				return err
			},
			"SetEnvironmentEnabled": func(tx *store.Tx, p *domain.Principal) error {
				return domain.SetEnvironmentEnabled(tx, p, "production", false)
			},
			"DeleteEnvironment": func(tx *store.Tx, p *domain.Principal) error { return domain.DeleteEnvironment(tx, p, "production") },
			"AddProjectEnvironment": func(tx *store.Tx, p *domain.Principal) error {
				return domain.AddProjectEnvironment(tx, p, "default", "production")
			},
			"CreateProject": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.CreateProject(tx, p, domain.ProjectInput{Name: "P"})
				return err
			},
			"DeleteProject": func(tx *store.Tx, p *domain.Principal) error { return domain.DeleteProject(tx, p, "other") },
			"CreateSegment": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.CreateSegment(tx, p, domain.SegmentInput{Name: "s"})
				return err
			},
			"CreateTagType": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.CreateTagType(tx, p, domain.TagTypeInput{Name: "team"})
				return err
			},
			"CreateTag": func(tx *store.Tx, p *domain.Principal) error {
				return domain.CreateTag(tx, p, store.Tag{Type: "simple", Value: "v"})
			},
			"TagFeature": func(tx *store.Tx, p *domain.Principal) error {
				return domain.TagFeature(tx, p, "f1", store.Tag{Type: "simple", Value: "v"})
			},
			"CreateContextField": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.CreateContextField(tx, p, domain.ContextFieldInput{Name: "tenant"})
				return err
			},
			"DeleteContextField": func(tx *store.Tx, p *domain.Principal) error { return domain.DeleteContextField(tx, p, "userId") },
			"CreateStrategyType": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.CreateStrategyType(tx, p, domain.StrategyTypeInput{Name: "custom"})
				return err
			},
			"SetStrategyTypeDeprecated": func(tx *store.Tx, p *domain.Principal) error {
				return domain.SetStrategyTypeDeprecated(tx, p, "default", true)
			},
			"SetFeatureTypeLifetime": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.SetFeatureTypeLifetime(tx, p, "release", json.RawMessage(`1`))
				return err
			},
			"CreateAPIToken": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.CreateAPIToken(tx, p, domain.APITokenInput{TokenName: "t", Type: "client"})
				return err
			},
			"CreateServiceAccount": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.CreateServiceAccount(tx, p, domain.ServiceAccountInput{Username: "bot", RootRole: role})
				return err
			},
			"IssueUserToken (service account)": func(tx *store.Tx, p *domain.Principal) error {
				_, err := domain.IssueUserToken(tx, p, true, 1, domain.UserTokenInput{Description: "d"})
				return err
			},
			"ImportState": func(tx *store.Tx, p *domain.Principal) error {
				return domain.ImportState(tx, p, domain.StateDocument{}, domain.ImportOptions{})
			},
		}
		before := eventCount(t, st)
		for name, op := range ops {
			for _, c := range []struct {
				p    *domain.Principal
				kind apierr.Kind
			}{{principal(domain.RoleViewer), apierr.KindForbidden}, {nil, apierr.KindUnauthenticated}} {
				err := st.Tx(ctx, func(tx *store.Tx) error { return op(tx, c.p) })
				if !apierr.IsKind(err, c.kind) {
					t.Errorf("%s as %+v: %v, want kind %v", name, c.p, err, c.kind)
				}
			}
		}
		if n := eventCount(t, st); n != before {
			t.Errorf("refused operations wrote %d events", n-before)
		}
		if _, err := st.Q(ctx).Feature("f1"); err != nil {
			t.Errorf("f1 after the refused operations: %v", err)
		}
	})
}
