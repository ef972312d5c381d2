package domain

import (
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// CreateSSOAccount creates a person who signs in through the identity
// provider only (no password), as the system, with role, when single
// sign-on allows creating them (internal/sso decides that). The email is
// their identity; name is what the provider calls them (may be empty).
func CreateSSOAccount(tx *store.Tx, email, name string, role int64) (store.Account, error) {
	if strings.TrimSpace(email) != email || email == "" || len(email) > 100 || !strings.Contains(email, "@") {
		return store.Account{}, apierr.Validation("The identity provider's email %q cannot name a Bunting user (1 to 100 characters with an @).", email)
	}
	if r, err := RootRoleOf(tx.Q, role); err != nil {
		return store.Account{}, err
	} else if r.ID != role {
		return store.Account{}, apierr.Validation("The default root role %d of single sign-on is not a root role (was it deleted?).", role)
	}
	a := store.Account{User: store.User{Email: &email, RootRole: role, CreatedAt: tx.Now()}}
	if name = strings.TrimSpace(name); name != "" {
		if r := []rune(name); len(r) > 100 {
			name = string(r[:100])
		}
		a.Name = &name
	}
	var err error
	if a.ID, err = tx.InsertUser(a.User); err != nil {
		return store.Account{}, err
	}
	return a, tx.Event(store.NewEvent{Type: "user-created", Actor: SystemActor, Data: accountEventData(a)})
}
