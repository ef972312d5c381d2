package domain_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// wantKind fails unless err is an apierr error of kind.
func wantKind(t *testing.T, what string, err error, kind apierr.Kind) {
	t.Helper()
	if !apierr.IsKind(err, kind) {
		t.Fatalf("%s: got %v, want a %v error", what, err, kind)
	}
}

// TestActionSetRulesWithoutHTTP runs the action set and signal endpoint
// operations as a caller inside the process would: the permission, the
// references (a service account, an existing endpoint), the per-project
// limit and the endpoint-in-use conflict hold without the HTTP layer, and
// a refused operation leaves no row and no event behind.
func TestActionSetRulesWithoutHTTP(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		st := servertest.OpenStore(t, db)
		ctx := context.Background()
		admin, editor := principal(domain.RoleAdmin), principal(domain.RoleEditor)
		lim := domain.ActionSetLimits{PerProject: 1, Filters: 5, FilterValues: 25, Actions: 10}
		name := "hook"
		var endpoint store.SignalEndpoint
		var bot, person domain.ServiceAccountView
		if err := st.Tx(ctx, func(tx *store.Tx) (err error) {
			if endpoint, err = domain.CreateSignalEndpoint(tx, admin, 5, domain.SignalEndpointInput{Name: &name}); err != nil {
				return err
			}
			if bot, err = domain.CreateServiceAccount(tx, admin, domain.ServiceAccountInput{Username: "bot", RootRole: json.RawMessage(`"Editor"`)}); err != nil {
				return err
			}
			_, err = domain.CreateAccount(tx, admin, domain.AccountInput{Username: ptr("vera"), Password: ptr("vera-password")})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		accts, err := st.Q(ctx).Accounts()
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range accts {
			if a.Username != nil && *a.Username == "vera" {
				person.ID = a.ID
			}
		}
		if !endpoint.Enabled || endpoint.ID == 0 || person.ID == 0 {
			t.Fatalf("endpoint %+v, person %d", endpoint, person.ID)
		}
		input := func(actor int64) domain.ActionSetInput {
			return domain.ActionSetInput{Name: ptr("react"), ActorID: &actor,
				Match: &store.ActionMatch{Source: store.SignalSourceEndpoint, SourceID: endpoint.ID},
				Actions: []domain.ActionInput{{Action: domain.ActionToggleOn,
					ExecutionParams: map[string]string{"environment": "development", "featureName": "checkout"}}}}
		}
		create := func(p *domain.Principal, in domain.ActionSetInput) (a store.ActionSet, err error) {
			err = st.Tx(ctx, func(tx *store.Tx) (err error) {
				a, err = domain.CreateActionSet(tx, p, "default", lim, in)
				return err
			})
			return a, err
		}
		before := eventCount(t, st)
		_, err = create(editor, input(bot.ID))
		wantKind(t, "an Editor creating an action set", err, apierr.KindForbidden)
		_, err = create(admin, input(person.ID))
		wantKind(t, "an action set running as a person", err, apierr.KindValidation)
		bad := input(bot.ID)
		bad.Actions[0].ExecutionParams["project"] = "other"
		_, err = create(admin, bad)
		wantKind(t, "an action for another project", err, apierr.KindValidation)
		if n := eventCount(t, st); n != before {
			t.Fatalf("refused operations wrote %d events", n-before)
		}

		a, err := create(admin, input(bot.ID))
		if err != nil {
			t.Fatal(err)
		}
		if !a.Enabled || len(a.Actions) != 1 || a.Actions[0].ExecutionParams["project"] != "default" || a.Actions[0].SortOrder != 1 {
			t.Fatalf("created %+v", a)
		}
		_, err = create(admin, input(bot.ID))
		if e, ok := err.(*apierr.Error); !ok || e.Name != "ExceedsLimitError" {
			t.Fatalf("a second action set over a limit of 1: %v", err)
		}

		// Disabling, then replacing without `enabled`, keeps it disabled.
		if err := st.Tx(ctx, func(tx *store.Tx) (err error) {
			if _, err = domain.SetActionSetEnabled(tx, admin, "default", a.ID, false); err != nil {
				return err
			}
			in := input(bot.ID)
			in.Name = ptr("renamed")
			a, err = domain.UpdateActionSet(tx, admin, "default", a.ID, lim, in)
			return err
		}); err != nil {
			t.Fatal(err)
		}
		if a.Enabled || a.Name != "renamed" {
			t.Fatalf("after disable and update: %+v", a)
		}

		err = st.Tx(ctx, func(tx *store.Tx) error { return domain.DeleteSignalEndpoint(tx, admin, endpoint.ID) })
		wantKind(t, "deleting an endpoint an action set listens to", err, apierr.KindConflict)
		if !strings.Contains(err.Error(), "action sets default/renamed;") {
			t.Fatalf("the conflict does not name the action set: %v", err)
		}
		if err := st.Tx(ctx, func(tx *store.Tx) error {
			if err := domain.DeleteActionSet(tx, admin, "default", a.ID); err != nil {
				return err
			}
			return domain.DeleteSignalEndpoint(tx, admin, endpoint.ID)
		}); err != nil {
			t.Fatal(err)
		}
		events, _, err := st.Q(ctx).Events(store.EventFilter{Limit: 100})
		if err != nil {
			t.Fatal(err)
		}
		var types []string
		for i := len(events) - 1; i >= 0; i-- {
			if e := events[i].Type; strings.HasPrefix(e, "actions-") || strings.HasPrefix(e, "signal-endpoint-") {
				types = append(types, e)
			}
		}
		want := []string{domain.EventSignalEndpointCreated, domain.EventActionsCreated, domain.EventActionsUpdated,
			domain.EventActionsUpdated, domain.EventActionsDeleted, domain.EventSignalEndpointDeleted}
		if !equal(types, want) {
			t.Fatalf("events %v, want %v", types, want)
		}
	})
}

// TestSignalTokenLimitAndPermission checks the endpoint token operations
// without HTTP: an Editor may not create one, the per-endpoint limit
// holds, and the secret is returned once.
func TestSignalTokenLimitAndPermission(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		st := servertest.OpenStore(t, db)
		ctx := context.Background()
		admin := principal(domain.RoleAdmin)
		name := "tokens"
		var e store.SignalEndpoint
		if err := st.Tx(ctx, func(tx *store.Tx) (err error) {
			e, err = domain.CreateSignalEndpoint(tx, admin, 5, domain.SignalEndpointInput{Name: &name})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		create := func(p *domain.Principal, tokenName string) (tok domain.CreatedSignalToken, err error) {
			err = st.Tx(ctx, func(tx *store.Tx) (err error) {
				tok, err = domain.CreateSignalToken(tx, p, e.ID, 1, domain.SignalTokenInput{Name: &tokenName})
				return err
			})
			return tok, err
		}
		_, err := create(principal(domain.RoleEditor), "editor")
		wantKind(t, "an Editor creating a token", err, apierr.KindForbidden)
		_, err = create(admin, "   ")
		wantKind(t, "a blank token name", err, apierr.KindValidation)
		tok, err := create(admin, "  first  ")
		if err != nil {
			t.Fatal(err)
		}
		if tok.Name != "first" || len(tok.Token) != 56 {
			t.Fatalf("token %+v", tok)
		}
		if _, err := create(admin, "second"); err == nil {
			t.Fatal("a second token over a limit of 1 was created")
		}
	})
}

func ptr[T any](v T) *T { return &v }
