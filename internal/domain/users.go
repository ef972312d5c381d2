package domain

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/access"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// RootRole is a role as the API shows it (Unleash's roleSchema): a root
// role (predefined or custom) or a project role.
type RootRole struct {
	ID          int64   `json:"id"`
	Type        string  `json:"type"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Project     *string `json:"project"`
}

// ViewRole is r as the API shows it.
func ViewRole(r store.Role) RootRole {
	return RootRole{ID: r.ID, Type: r.Type, Name: r.Name, Description: r.Description}
}

// RootRoles lists the root roles, predefined then custom, by id.
func RootRoles(q store.Q) ([]RootRole, error) {
	roles, err := q.Roles()
	if err != nil {
		return nil, err
	}
	out := []RootRole{}
	for _, r := range roles {
		if access.IsRootType(r.Type) {
			out = append(out, ViewRole(r))
		}
	}
	return out, nil
}

// RootRoleOf is the root role id as the API shows it (Viewer when the id
// names no root role).
func RootRoleOf(q store.Q, id int64) (RootRole, error) {
	r, err := q.Role(id)
	if apierr.IsKind(err, apierr.KindNotFound) || (err == nil && !access.IsRootType(r.Type)) {
		r, err = q.Role(RoleViewer)
	}
	if err != nil {
		return RootRole{}, err
	}
	return ViewRole(r), nil
}

// ParseRootRole accepts a root role's id (a number, or a string of
// digits) or its name, ignoring case: a predefined one (1 Admin, 2 Editor,
// 3 Viewer) or a custom root role.
func ParseRootRole(q store.Q, raw json.RawMessage) (int64, error) {
	var (
		r    store.Role
		err  error = apierr.NotFound("no role")
		id   int64
		name string
	)
	switch {
	case json.Unmarshal(raw, &id) == nil:
		r, err = q.Role(id)
	case json.Unmarshal(raw, &name) == nil:
		if n, perr := strconv.ParseInt(name, 10, 64); perr == nil {
			r, err = q.Role(n)
		} else {
			r, err = q.RoleByName(name)
		}
	}
	if err != nil && !apierr.IsKind(err, apierr.KindNotFound) {
		return 0, err
	}
	if err != nil || !access.IsRootType(r.Type) {
		return 0, apierr.Validation("The `rootRole` property must name a root role: 1 (Admin), 2 (Editor), 3 (Viewer) or a custom root role's id or name. You sent %s.", string(raw))
	}
	return r.ID, nil
}

// ServiceAccountView is a service account as the API shows it.
type ServiceAccountView struct {
	ID        int64             `json:"id"`
	Username  *string           `json:"username"`
	Name      *string           `json:"name"`
	RootRole  int64             `json:"rootRole"`
	CreatedAt time.Time         `json:"createdAt"`
	Tokens    []store.UserToken `json:"tokens,omitempty"`
}

// ViewServiceAccount is u as the API shows it (without tokens).
func ViewServiceAccount(u store.User) ServiceAccountView {
	return ServiceAccountView{ID: u.ID, Username: u.Username, Name: u.Name, RootRole: u.RootRole, CreatedAt: u.CreatedAt}
}

// ServiceAccountInput is a service account as an admin call creates or
// updates it; the root role is an id (1–3) or a name.
type ServiceAccountInput struct {
	Username string          `json:"username"`
	Name     *string         `json:"name"`
	RootRole json.RawMessage `json:"rootRole"`
}

// CreateServiceAccount creates a service account as p, with its event.
func CreateServiceAccount(tx *store.Tx, p *Principal, in ServiceAccountInput) (ServiceAccountView, error) {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return ServiceAccountView{}, err
	}
	if u := strings.TrimSpace(in.Username); u == "" || len(u) > 100 || u != in.Username {
		return ServiceAccountView{}, apierr.Validation("The `username` property is required: 1 to 100 characters without surrounding spaces. You sent %q.", in.Username)
	}
	if len(in.RootRole) == 0 {
		return ServiceAccountView{}, apierr.Validation("The `rootRole` property is required. It was not present on the data you sent.")
	}
	role, err := ParseRootRole(tx.Q, in.RootRole)
	if err != nil {
		return ServiceAccountView{}, err
	}
	u := store.User{Username: &in.Username, Name: in.Name, RootRole: role, IsService: true, CreatedAt: tx.Now()}
	id, err := tx.InsertUser(u)
	if err != nil {
		return ServiceAccountView{}, err
	}
	u.ID = id
	return ViewServiceAccount(u), tx.Event(store.NewEvent{Type: "service-account-created", Actor: p.Actor(), Data: ViewServiceAccount(u)})
}

// UpdateServiceAccount changes a service account's name and root role as
// p, with its event.
func UpdateServiceAccount(tx *store.Tx, p *Principal, id int64, in ServiceAccountInput) (ServiceAccountView, error) {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return ServiceAccountView{}, err
	}
	old, err := tx.ServiceAccount(id)
	if err != nil {
		return ServiceAccountView{}, err
	}
	u := old
	if in.Name != nil {
		u.Name = in.Name
	}
	if len(in.RootRole) > 0 {
		if u.RootRole, err = ParseRootRole(tx.Q, in.RootRole); err != nil {
			return ServiceAccountView{}, err
		}
	}
	if err := tx.UpdateUser(u); err != nil {
		return ServiceAccountView{}, err
	}
	return ViewServiceAccount(u), tx.Event(store.NewEvent{Type: "service-account-updated", Actor: p.Actor(), Data: ViewServiceAccount(u), PreData: ViewServiceAccount(old)})
}

// DeleteServiceAccount deletes a service account with its tokens as p,
// with its event.
func DeleteServiceAccount(tx *store.Tx, p *Principal, id int64) error {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return err
	}
	old, err := tx.ServiceAccount(id)
	if err != nil {
		return err
	}
	if err := tx.DeleteUser(id); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "service-account-deleted", Actor: p.Actor(), PreData: ViewServiceAccount(old)})
}

// UserTokenInput is a new personal or service-account token.
type UserTokenInput struct {
	Description string     `json:"description"`
	ExpiresAt   *time.Time `json:"expiresAt"`
}

// CreatedUserToken is a new token with its secret, shown only once.
type CreatedUserToken struct {
	store.UserToken
	Secret string `json:"secret"`
}

// CallingUser is the user behind p; admin API tokens have none.
func CallingUser(p *Principal) (*store.User, error) {
	if p == nil || p.User == nil {
		return nil, apierr.Validation("Personal access tokens belong to a user; an admin API token has no user. Use a user's or service account's token.")
	}
	return p.User, nil
}

// IssueUserToken creates a token for a service account (serviceAccount
// true: p needs ADMIN) or for p's own user (serviceAccount false, userID
// ignored), with its pat-created event.
func IssueUserToken(tx *store.Tx, p *Principal, serviceAccount bool, userID int64, in UserTokenInput) (CreatedUserToken, error) {
	if serviceAccount {
		if err := p.Require(PermAdmin, "", ""); err != nil {
			return CreatedUserToken{}, err
		}
	} else {
		u, err := CallingUser(p)
		if err != nil {
			return CreatedUserToken{}, err
		}
		userID = u.ID
	}
	if strings.TrimSpace(in.Description) == "" {
		return CreatedUserToken{}, apierr.Validation("The `description` property is required. It was not present on the data you sent.")
	}
	if in.ExpiresAt != nil && !in.ExpiresAt.After(tx.Now()) {
		return CreatedUserToken{}, apierr.Validation("The `expiresAt` property must be in the future.")
	}
	secret := "user:" + RandomHex(28)
	t := store.UserToken{UserID: userID, Description: &in.Description, ExpiresAt: in.ExpiresAt, Hint: store.SecretHint(secret)}
	if serviceAccount {
		if _, err := tx.ServiceAccount(userID); err != nil {
			return CreatedUserToken{}, err
		}
	}
	t.CreatedAt = tx.Now()
	id, err := tx.InsertUserToken(t, secret)
	if err != nil {
		return CreatedUserToken{}, err
	}
	t.ID = id
	return CreatedUserToken{UserToken: t, Secret: secret}, tx.Event(store.NewEvent{Type: "pat-created", Actor: p.Actor(), Data: t})
}

// RevokeUserToken deletes one of a service account's tokens
// (serviceAccount true: p needs ADMIN) or of p's own user, with its
// pat-deleted event.
func RevokeUserToken(tx *store.Tx, p *Principal, serviceAccount bool, userID, tokenID int64) error {
	if serviceAccount {
		if err := p.Require(PermAdmin, "", ""); err != nil {
			return err
		}
	} else {
		u, err := CallingUser(p)
		if err != nil {
			return err
		}
		userID = u.ID
	}
	removed, err := tx.DeleteUserToken(userID, tokenID)
	if err != nil {
		return err
	}
	if !removed {
		return apierr.NotFound("Could not find token with id %d", tokenID)
	}
	return tx.Event(store.NewEvent{Type: "pat-deleted", Actor: p.Actor(), PreData: map[string]int64{"id": tokenID, "userId": userID}})
}
