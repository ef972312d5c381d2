package domain_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// TestAccountRulesWithoutHTTP runs the people and session operations as a
// caller inside the process would: the first admin is created once, only
// an admin manages people, the last active admin cannot be demoted or
// deleted (and the refused change leaves no event), a password change
// needs the current password and ends the person's sessions, and a
// deactivated person cannot sign in.
func TestAccountRulesWithoutHTTP(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		st := servertest.OpenStore(t, db)
		ctx := context.Background()
		q := st.Q(ctx)
		limits := domain.NewLoginLimiter()
		tx := func(op func(tx *store.Tx) error) error { return st.Tx(ctx, op) }
		for i, want := range []bool{true, false} {
			var created bool
			if err := tx(func(tx *store.Tx) (err error) {
				created, err = domain.BootstrapAdminUser(tx, "root", "root-password")
				return err
			}); err != nil || created != want {
				t.Fatalf("bootstrap %d: created %v, %v; want %v", i+1, created, err, want)
			}
		}
		signIn := func(name, password string) (domain.Session, error) {
			return domain.SignIn(q, limits, st.Now(), "192.0.2.1", domain.SignInInput{Username: name, Password: password})
		}
		rootSession, err := signIn("root", "root-password")
		if err != nil {
			t.Fatal(err)
		}
		root := rootSession.Principal
		if root.RootRole != domain.RoleAdmin || root.Name != "root" {
			t.Fatalf("root principal %+v", root)
		}

		vera := domain.AccountInput{Username: ptr("vera"), Password: ptr("vera-password")}
		err = tx(func(tx *store.Tx) error {
			_, err := domain.CreateAccount(tx, principal(domain.RoleEditor), vera)
			return err
		})
		wantKind(t, "an Editor creating a person", err, apierr.KindForbidden)
		var v store.Account
		if err := tx(func(tx *store.Tx) (err error) { v, err = domain.CreateAccount(tx, root, vera); return err }); err != nil {
			t.Fatal(err)
		}
		if v.RootRole != domain.RoleViewer || v.ID == 0 {
			t.Fatalf("created %+v", v)
		}

		before := eventCount(t, st)
		err = tx(func(tx *store.Tx) error {
			_, err := domain.UpdateAccount(tx, root, *root.UserID, domain.AccountInput{RootRole: json.RawMessage(`"Viewer"`)})
			return err
		})
		wantKind(t, "demoting the last admin", err, apierr.KindValidation)
		err = tx(func(tx *store.Tx) error { return domain.DeleteAccount(tx, root, *root.UserID) })
		wantKind(t, "deleting the last admin", err, apierr.KindValidation)
		if n := eventCount(t, st); n != before {
			t.Fatalf("refused changes wrote %d events", n-before)
		}
		if a, err := q.Account(*root.UserID); err != nil || a.RootRole != domain.RoleAdmin {
			t.Fatalf("root after refused changes: %+v, %v", a, err)
		}

		veraSession, err := signIn("vera", "vera-password")
		if err != nil {
			t.Fatal(err)
		}
		change := func(p *domain.Principal, old, pw string) error {
			return tx(func(tx *store.Tx) error {
				return domain.ChangeOwnPassword(tx, p, domain.PasswordInput{OldPassword: old, Password: pw})
			})
		}
		wantKind(t, "a wrong current password", change(veraSession.Principal, "guess-guess", "new-password"), apierr.KindValidation)
		wantKind(t, "an admin token changing its own password",
			change(&domain.Principal{Kind: domain.KindAdminToken, Name: "admin", RootRole: domain.RoleAdmin}, "x", "new-password"), apierr.KindValidation)
		if err := change(veraSession.Principal, "vera-password", "new-password"); err != nil {
			t.Fatal(err)
		}
		_, err = domain.SessionPrincipal(q, veraSession.Secret, false, "", "X-CSRF-Token")
		wantKind(t, "a session after a password change", err, apierr.KindUnauthenticated)
		_, err = signIn("vera", "vera-password")
		wantKind(t, "the old password", err, apierr.KindUnauthenticated)

		if err := tx(func(tx *store.Tx) error {
			_, err := domain.UpdateAccount(tx, root, v.ID, domain.AccountInput{Deactivated: ptr(true)})
			return err
		}); err != nil {
			t.Fatal(err)
		}
		_, err = signIn("vera", "new-password")
		wantKind(t, "a deactivated person", err, apierr.KindUnauthenticated)
	})
}

// TestSignInLimitHoldsWithoutHTTP checks the sign-in rate limit in the
// domain: after five wrong passwords for a name, even the right one is
// refused with a 429 until the window has passed.
func TestSignInLimitHoldsWithoutHTTP(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		st := servertest.OpenStore(t, db)
		q := st.Q(context.Background())
		if err := st.Tx(context.Background(), func(tx *store.Tx) error {
			_, err := domain.BootstrapAdminUser(tx, "root", "root-password")
			return err
		}); err != nil {
			t.Fatal(err)
		}
		limits := domain.NewLoginLimiter()
		signIn := func(pw string) error {
			_, err := domain.SignIn(q, limits, time.Now(), "192.0.2.7", domain.SignInInput{Username: "root", Password: pw})
			return err
		}
		for range 5 {
			wantKind(t, "a wrong password", signIn("wrong-password"), apierr.KindUnauthenticated)
		}
		wantKind(t, "the right password after five failures", signIn("root-password"), apierr.KindRateLimited)
	})
}
