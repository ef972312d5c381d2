package e2e

import (
	"net/http"
	"slices"
	"sync"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// recordingSyncer is a GroupSyncer that records what it was given.
type recordingSyncer struct {
	mu    sync.Mutex
	calls map[string][]string
}

func (r *recordingSyncer) SyncGroups(tx *store.Tx, user store.User, claimed []string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[*user.Email] = claimed
	return nil
}

// TestSSOGroupClaims: with group syncing on, the groups the provider puts
// in the ID token at groupJsonPath reach the GroupSyncer at every sign-in
// (the seam internal/access fills), an empty claim included.
func TestSSOGroupClaims(t *testing.T) {
	s := startSSO(t, servertest.NewSQLite(t), map[string]any{"autoCreate": true, "emailDomains": "example.com",
		"enableGroupSyncing": true, "groupJsonPath": "groups", "addGroupsScope": false})
	syncer := &recordingSyncer{calls: map[string][]string{}}
	s.h.Server.SSO().SetGroupSyncer(syncer)
	s.p.Storage.set(func(p *providerStorage) { p.groups["alice"] = []string{"devs", "ops"} })
	f := s.newFlow(t)
	if res, body := f.callback(f.toCallback("alice", "alice-pass")); res.StatusCode != http.StatusSeeOther {
		t.Fatalf("sign-in: %s %v", res.Status, body)
	}
	if got := syncer.calls["alice@example.com"]; !slices.Equal(got, []string{"devs", "ops"}) {
		t.Fatalf("the syncer got %v, want [devs ops]", got)
	}
	s.p.Storage.set(func(p *providerStorage) { p.groups["alice"] = []string{} })
	f = s.newFlow(t)
	f.callback(f.toCallback("alice", "alice-pass"))
	if got, ok := syncer.calls["alice@example.com"]; !ok || len(got) != 0 {
		t.Fatalf("after the provider dropped every group the syncer got %v, want none", got)
	}
}

// TestSSOSettingsChangeOnAnotherInstance: two instances share a database;
// a client secret changed through one is used by the other at its next
// sign-in, without a restart.
func TestSSOSettingsChangeOnAnotherInstance(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		s := startSSO(t, db, map[string]any{"autoCreate": true})
		other := servertest.Start(t, db)
		f := s.newFlow(t)
		if res, _ := f.callback(f.toCallback("alice", "alice-pass")); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("first sign-in: %s", res.Status)
		}
		other.Do(t, "PUT", "/api/admin/auth/oidc/settings", other.AdminToken, map[string]any{"secret": "a-wrong-secret"}).Want(t, 200)
		f = s.newFlow(t)
		res, body := f.callback(f.toCallback("alice", "alice-pass"))
		if res.StatusCode != http.StatusUnauthorized || body["message"] != "The identity provider did not accept the sign-in code. Start again from the sign-in page." {
			t.Fatalf("with the wrong secret set elsewhere: %s %v", res.Status, body)
		}
		other.Do(t, "PUT", "/api/admin/auth/oidc/settings", other.AdminToken, map[string]any{"secret": providerClientSecret}).Want(t, 200)
		f = s.newFlow(t)
		if res, body := f.callback(f.toCallback("alice", "alice-pass")); res.StatusCode != http.StatusSeeOther {
			t.Fatalf("with the right secret again: %s %v", res.Status, body)
		}
	})
}
