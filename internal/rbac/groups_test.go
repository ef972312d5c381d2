package rbac_test

import (
	"context"
	"slices"
	"testing"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/rbac"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// TestSyncSSOGroups: at each sign-in a person joins the groups whose SSO
// mappings name one of their identity provider's groups and leaves those
// they joined this way that no longer match; a membership an admin made
// stays. Each join and leave writes its event.
func TestSyncSSOGroups(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		st := servertest.OpenStore(t, db)
		ctx := context.Background()
		admin := &domain.Principal{Kind: domain.KindAdminToken, Name: "admin"}
		var uid int64
		ids := map[string]int64{}
		err := st.Tx(ctx, func(tx *store.Tx) (err error) {
			name := "sam"
			if uid, err = tx.InsertUser(store.User{Username: &name, RootRole: domain.RoleViewer, CreatedAt: tx.Now()}); err != nil {
				return err
			}
			if err := tx.Event(store.NewEvent{Type: "user-created", Actor: domain.SystemActor, Data: map[string]any{"id": uid}}); err != nil {
				return err
			}
			for _, g := range []struct {
				name     string
				mappings []string
			}{{"eng", []string{"engineering"}}, {"ops", []string{"operations", "sre"}}, {"pets", nil}} {
				in := rbac.GroupInput{Name: g.name, MappingsSSO: g.mappings}
				v, err := rbac.CreateGroup(tx, admin, in)
				if err != nil {
					return err
				}
				ids[g.name] = v.ID
			}
			// An admin puts sam in pets.
			_, err = rbac.UpdateGroup(tx, admin, ids["pets"], rbac.GroupInput{Name: "pets", Users: rbac.Members(uid)})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		groupsOf := func() []string {
			t.Helper()
			ms, err := st.Q(ctx).GroupsOfUser(uid)
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, m := range ms {
				for name, id := range ids {
					if id == m.GroupID {
						out = append(out, name)
					}
				}
			}
			slices.Sort(out)
			return out
		}
		sync := func(claims ...string) {
			t.Helper()
			if err := st.Tx(ctx, func(tx *store.Tx) error { return rbac.SyncSSOGroups(tx, uid, claims) }); err != nil {
				t.Fatal(err)
			}
		}
		sync("engineering", "sre", "unknown")
		if got := groupsOf(); !slices.Equal(got, []string{"eng", "ops", "pets"}) {
			t.Fatalf("after the first sign-in: %v", got)
		}
		sync("sre")
		if got := groupsOf(); !slices.Equal(got, []string{"ops", "pets"}) {
			t.Fatalf("after leaving engineering: %v", got)
		}
		sync()
		if got := groupsOf(); !slices.Equal(got, []string{"pets"}) {
			t.Fatalf("with no groups: %v (the admin's membership must stay)", got)
		}
		for typ, want := range map[string]int{"group-user-added": 2, "group-user-removed": 2} {
			events, _, err := st.Q(ctx).Events(store.EventFilter{Type: typ})
			if err != nil || len(events) != want {
				t.Errorf("%s events: %d (%v), want %d", typ, len(events), err, want)
			}
		}
	})
}
