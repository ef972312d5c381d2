package domain

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/crypto/argon2"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// Password lengths people may choose.
const (
	MinPasswordLength = 8
	MaxPasswordLength = 256
)

// argon2id parameters: OWASP's second recommended set (19 MiB, 2 passes).
const (
	argonMemory  = 19 * 1024
	argonTime    = 2
	argonThreads = 1
	argonKeyLen  = 32
)

// HashPassword returns an argon2id hash in the PHC string format.
func HashPassword(password string) string {
	salt := make([]byte, 16)
	_, _ = rand.Read(salt)
	key := argon2.IDKey([]byte(password), salt, argonTime, argonMemory, argonThreads, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s", argon2.Version, argonMemory, argonTime, argonThreads, b64.EncodeToString(salt), b64.EncodeToString(key))
}

// CheckPassword reports whether password matches a PHC argon2id hash.
func CheckPassword(hash, password string) bool {
	parts := strings.Split(hash, "$")
	if len(parts) != 6 || parts[1] != "argon2id" {
		return false
	}
	var m, t uint32
	var p uint8
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &m, &t, &p); err != nil || m == 0 || m > 1<<20 || t == 0 || t > 10 || p == 0 {
		return false
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	key, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(key) == 0 || len(key) > 128 {
		return false
	}
	got := argon2.IDKey([]byte(password), salt, t, m, p, uint32(len(key)))
	return subtle.ConstantTimeCompare(got, key) == 1
}

// dummyHash is checked against when the login names nobody, so that an
// unknown name takes as long as a wrong password (made on first use, not
// at start).
var dummyHash = sync.OnceValue(func() string { return HashPassword("not a password anyone has") })

// validatePassword applies the length rule to a new password.
func validatePassword(pw string) error {
	if len(pw) < MinPasswordLength || len(pw) > MaxPasswordLength {
		return apierr.Validation("The `password` property must have %d to %d characters.", MinPasswordLength, MaxPasswordLength)
	}
	return nil
}

// AccountName is how a person is named in events and sessions: the
// username, else the email.
func AccountName(u store.User) string {
	switch {
	case u.Username != nil:
		return *u.Username
	case u.Email != nil:
		return *u.Email
	}
	return "user"
}

// UserView is a person as the people routes answer (Unleash's userSchema:
// rootRole is the role's id). An absent username, name or email is left
// out rather than null: Unleash's Terraform provider reads a null username
// or name as a crash.
type UserView struct {
	ID            int64     `json:"id"`
	Username      *string   `json:"username,omitempty"`
	Name          *string   `json:"name,omitempty"`
	Email         *string   `json:"email,omitempty"`
	RootRole      int64     `json:"rootRole"`
	AccountType   string    `json:"accountType"`
	CreatedAt     time.Time `json:"createdAt"`
	LoginAttempts int       `json:"loginAttempts"`
	Permissions   []string  `json:"permissions"`
	Deactivated   bool      `json:"deactivated"`
	HasPassword   bool      `json:"hasPassword"`
	// EmailSent and InviteLink are set on creation: no mail is sent; a
	// person created without a password gets a one-time link to set one.
	EmailSent  *bool  `json:"emailSent,omitempty"`
	InviteLink string `json:"inviteLink,omitempty"`
}

// ViewAccount is a as the people routes answer it.
func ViewAccount(a store.Account) UserView {
	return UserView{ID: a.ID, Username: a.Username, Name: a.Name, Email: a.Email, RootRole: a.RootRole, AccountType: "User",
		CreatedAt: a.CreatedAt, Permissions: []string{}, Deactivated: a.Deactivated, HasPassword: a.HasPassword}
}

// accountEventData is what events record about a person (never the hash).
func accountEventData(a store.Account) map[string]any {
	return map[string]any{"id": a.ID, "username": a.Username, "email": a.Email, "name": a.Name, "rootRole": a.RootRole, "deactivated": a.Deactivated}
}

// BootstrapAdminUser creates name, a person with the Admin role and
// password, as the system, when the database holds nobody yet (an email
// when name holds @, else a username). It reports whether it created
// them.
func BootstrapAdminUser(tx *store.Tx, name, password string) (bool, error) {
	n, err := tx.CountAccounts()
	if err != nil || n > 0 {
		return false, err
	}
	u := store.User{RootRole: RoleAdmin, CreatedAt: tx.Now()}
	if strings.Contains(name, "@") {
		u.Email = &name
	} else {
		u.Username = &name
	}
	id, err := tx.InsertUser(u)
	if err != nil {
		return false, err
	}
	u.ID = id
	if err := tx.SetPasswordHash(id, HashPassword(password)); err != nil {
		return false, err
	}
	return true, tx.Event(store.NewEvent{Type: "user-created", Actor: SystemActor, Data: accountEventData(store.Account{User: u, HasPassword: true})})
}

// AccountInput creates or updates a person; the root role is a root
// role's id or name. SendEmail is accepted for Unleash's clients and
// ignored: Bunting sends no mail.
type AccountInput struct {
	Username    *string         `json:"username"`
	Email       *string         `json:"email"`
	Name        *string         `json:"name"`
	RootRole    json.RawMessage `json:"rootRole"`
	Password    *string         `json:"password"`
	Deactivated *bool           `json:"deactivated"`
	SendEmail   *bool           `json:"sendEmail"`
}

// role is the root role in, and whether in names one.
func (in AccountInput) role(q store.Q) (int64, bool, error) {
	if len(in.RootRole) == 0 || string(in.RootRole) == "null" {
		return 0, false, nil
	}
	r, err := ParseRootRole(q, in.RootRole)
	return r, true, err
}

// CreateAccount creates a person as p (ADMIN), with its event. The role
// defaults to Viewer; an email already in use is a 409. Without a
// password the person signs in through single sign-on, or sets one through
// a link an admin makes (CreatePasswordLink).
func CreateAccount(tx *store.Tx, p *Principal, in AccountInput) (store.Account, error) {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return store.Account{}, err
	}
	if in.Username == nil && in.Email == nil {
		return store.Account{}, apierr.Validation("The `username` property is required (or `email`).")
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"username", in.Username}, {"email", in.Email}} {
		if f.v != nil && (strings.TrimSpace(*f.v) != *f.v || *f.v == "" || len(*f.v) > 100) {
			return store.Account{}, apierr.Validation("The `%s` property must have 1 to 100 characters without surrounding spaces.", f.name)
		}
	}
	if in.Email != nil && !strings.Contains(*in.Email, "@") {
		return store.Account{}, apierr.Validation("The `email` property must be an email address.")
	}
	if in.Username != nil && strings.Contains(*in.Username, "@") {
		return store.Account{}, apierr.Validation("The `username` property cannot contain @ (use `email` for an address).")
	}
	role, ok, err := in.role(tx.Q)
	if err != nil {
		return store.Account{}, err
	}
	if !ok {
		role = RoleViewer
	}
	if in.Password != nil {
		if err := validatePassword(*in.Password); err != nil {
			return store.Account{}, err
		}
	}
	a := store.Account{User: store.User{Username: in.Username, Email: in.Email, Name: in.Name, RootRole: role}, HasPassword: in.Password != nil}
	if in.Email != nil {
		if _, _, err := tx.AccountByLogin(*in.Email); err == nil {
			return store.Account{}, apierr.Conflict("A user with that email already exists")
		}
	}
	a.CreatedAt = tx.Now()
	if a.ID, err = tx.InsertUser(a.User); err != nil {
		return store.Account{}, err
	}
	if in.Password != nil {
		if err := tx.SetPasswordHash(a.ID, HashPassword(*in.Password)); err != nil {
			return store.Account{}, err
		}
	}
	return a, tx.Event(store.NewEvent{Type: "user-created", Actor: p.Actor(), Data: accountEventData(a)})
}

// UpdateAccount changes a person's name, email, root role or whether they
// are deactivated as p (ADMIN), with its event. The username cannot
// change and the password has its own operations; deactivating ends the
// person's sessions; a change that leaves no active admin is refused.
func UpdateAccount(tx *store.Tx, p *Principal, id int64, in AccountInput) (store.Account, error) {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return store.Account{}, err
	}
	if in.Username != nil || in.Password != nil {
		return store.Account{}, apierr.Validation("The `username` cannot change, and a password is reset at /api/admin/user-admin/{id}/reset-password.")
	}
	role, hasRole, err := in.role(tx.Q)
	if err != nil {
		return store.Account{}, err
	}
	old, err := tx.Account(id)
	if err != nil {
		return store.Account{}, err
	}
	a := old
	if in.Name != nil {
		a.Name = in.Name
	}
	if in.Email != nil {
		a.Email = in.Email
	}
	if hasRole {
		a.RootRole = role
	}
	if in.Deactivated != nil {
		a.Deactivated = *in.Deactivated
	}
	if err := tx.UpdateAccount(a); err != nil {
		return a, err
	}
	if err := keepAnAdmin(tx); err != nil {
		return a, err
	}
	if a.Deactivated && !old.Deactivated {
		if _, err := tx.DeleteUserSessions(id); err != nil {
			return a, err
		}
	}
	return a, tx.Event(store.NewEvent{Type: "user-updated", Actor: p.Actor(), Data: accountEventData(a), PreData: accountEventData(old)})
}

// keepAnAdmin refuses a change that leaves no active admin.
func keepAnAdmin(tx *store.Tx) error {
	n, err := tx.CountActiveAdmins()
	if err != nil {
		return err
	}
	if n == 0 {
		return apierr.Validation("This change would leave no active user with the Admin role; keep at least one.")
	}
	return nil
}

// DeleteAccount deletes a person as p (ADMIN), with its event, unless that
// leaves no active admin.
func DeleteAccount(tx *store.Tx, p *Principal, id int64) error {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return err
	}
	old, err := tx.Account(id)
	if err != nil {
		return err
	}
	if err := tx.DeleteUser(id); err != nil {
		return err
	}
	if err := keepAnAdmin(tx); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "user-deleted", Actor: p.Actor(), PreData: accountEventData(old)})
}

// PasswordInput is a new password and, when people change their own, the
// current one.
type PasswordInput struct {
	Password    string `json:"password"`
	OldPassword string `json:"oldPassword"`
}

// ResetPassword sets a person's password as p (ADMIN) and ends their
// sessions, with its event.
func ResetPassword(tx *store.Tx, p *Principal, id int64, in PasswordInput) error {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return err
	}
	if err := validatePassword(in.Password); err != nil {
		return err
	}
	return setPassword(tx, p, id, in.Password, "user-password-reset")
}

// ChangeOwnPassword sets the password of p's own user, given the current
// one, and ends their sessions, with its event.
func ChangeOwnPassword(tx *store.Tx, p *Principal, in PasswordInput) error {
	u, err := CallingUser(p)
	if err != nil {
		return err
	}
	if err := validatePassword(in.Password); err != nil {
		return err
	}
	_, hash, err := tx.AccountByLogin(AccountName(*u))
	if err != nil {
		return err
	}
	if !CheckPassword(hash, in.OldPassword) {
		return apierr.Validation("The `oldPassword` property is not your current password.")
	}
	return setPassword(tx, p, u.ID, in.Password, "user-password-changed")
}

func setPassword(tx *store.Tx, p *Principal, id int64, password, event string) error {
	a, err := tx.Account(id)
	if err != nil {
		return err
	}
	if err := tx.SetPasswordHash(id, HashPassword(password)); err != nil {
		return err
	}
	if _, err := tx.DeleteUserSessions(id); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: event, Actor: p.Actor(), Data: map[string]any{"id": a.ID, "username": a.Username, "email": a.Email}})
}
