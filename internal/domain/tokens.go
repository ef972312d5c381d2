package domain

import (
	"crypto/rand"
	"encoding/hex"
	"slices"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// RandomHex returns n random bytes as hex.
func RandomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// tokenPermissions are the read/create/delete permissions per token type.
var tokenPermissions = map[string][3]string{
	store.TokenClient:   {PermReadClientToken, PermCreateClientToken, PermDeleteClientToken},
	store.TokenFrontend: {PermReadFrontendToken, PermCreateFrontendToken, PermDeleteFrontendToken},
	store.TokenAdmin:    {PermAdmin, PermAdmin, PermAdmin},
}

// TokenView is an API token in lists: a client or frontend token with its
// whole secret, which those who may read its type read back as in Unleash
// (its Terraform provider finds a token by its secret); an admin token,
// or one stored before secrets were kept, only by its hint (and once, in
// full, when created).
type TokenView struct {
	store.APIToken
	Project string `json:"project"`
	// ID names the token without its secret (the hash it is stored by),
	// so a list can revoke it: DELETE /api/admin/api-tokens/{id}.
	ID string `json:"id"`
}

func viewToken(t store.APIToken) TokenView {
	project := "*"
	if len(t.Projects) == 1 {
		project = t.Projects[0]
	} else if len(t.Projects) > 1 {
		project = "[]"
	}
	return TokenView{APIToken: t, Project: project, ID: t.Hash}
}

// TokenEventData is an API token as its events record it.
func TokenEventData(t store.APIToken) map[string]any {
	return map[string]any{"tokenName": t.TokenName, "type": t.Type, "environment": t.Environment, "projects": t.Projects}
}

// tokenVisible reports whether p may see t: not when it is scoped to a
// private project p may not see.
func tokenVisible(p *Principal, t store.APIToken) bool {
	for _, pr := range t.Projects {
		if pr != "*" && !p.CanSeeProject(pr) {
			return false
		}
	}
	return true
}

// ListAPITokens lists the API tokens of the types p may read, oldest
// first, but those of private projects p may not see; 403 when p may read
// none.
func ListAPITokens(q store.Q, p *Principal) ([]TokenView, error) {
	all, err := q.APITokens()
	if err != nil {
		return nil, err
	}
	out := []TokenView{}
	readable := false
	for typ, perms := range tokenPermissions {
		if p.Can(perms[0], "", "") {
			readable = true
			for _, t := range all {
				if t.Type == typ && tokenVisible(p, t) {
					v := viewToken(t)
					if secret := q.TokenSecret(t); secret != "" {
						v.Hint = secret
					}
					out = append(out, v)
				}
			}
		}
	}
	if !readable {
		return nil, Forbidden(PermReadClientToken, "")
	}
	slices.SortFunc(out, func(a, b TokenView) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return out, nil
}

// APITokenInput is a new API token.
type APITokenInput struct {
	TokenName   string     `json:"tokenName"`
	Username    string     `json:"username"`
	Type        string     `json:"type"`
	Environment string     `json:"environment"`
	Project     string     `json:"project"`
	Projects    []string   `json:"projects"`
	ExpiresAt   *time.Time `json:"expiresAt"`
}

func (b *APITokenInput) normalize() error {
	if b.TokenName == "" {
		b.TokenName = b.Username
	}
	if b.TokenName == "" {
		return apierr.Validation("The `tokenName` property is required. It was not present on the data you sent.")
	}
	switch strings.ToLower(b.Type) {
	case "client", "backend":
		b.Type = store.TokenClient
	case "frontend":
		b.Type = store.TokenFrontend
	case "admin":
		b.Type = store.TokenAdmin
	case "":
		return apierr.Validation("The `type` property is required. It was not present on the data you sent.")
	default:
		return apierr.Validation("The `type` property must be one of client, backend, frontend, admin. You provided %q.", b.Type)
	}
	if len(b.Projects) == 0 && b.Project != "" {
		b.Projects = []string{b.Project}
	}
	if len(b.Projects) == 0 {
		b.Projects = []string{"*"}
	}
	if b.Type == store.TokenAdmin {
		b.Environment, b.Projects = "*", []string{"*"}
		return nil
	}
	if b.Environment == "" {
		b.Environment = "development"
	}
	if b.Environment == "*" {
		return apierr.Validation("A %s token cannot be scoped to all environments.", b.Type)
	}
	return nil
}

// CreateAPIToken creates an API token as p (who needs the create
// permission of its type), with its event. The returned view carries the
// whole secret in Hint, the only time it is shown.
func CreateAPIToken(tx *store.Tx, p *Principal, in APITokenInput) (TokenView, error) {
	if err := in.normalize(); err != nil {
		return TokenView{}, err
	}
	if err := p.Require(tokenPermissions[in.Type][1], "", ""); err != nil {
		return TokenView{}, err
	}
	scope := "*"
	if len(in.Projects) == 1 {
		scope = in.Projects[0]
	} else {
		scope = "[]"
	}
	secret := scope + ":" + in.Environment + "." + RandomHex(28)
	t := store.APIToken{TokenName: in.TokenName, Type: in.Type, Environment: in.Environment, Projects: in.Projects, ExpiresAt: in.ExpiresAt}
	if in.Environment != "*" {
		if _, err := tx.Environment(in.Environment); err != nil {
			return TokenView{}, apierr.Validation("Environment=%s does not exist", in.Environment)
		}
	}
	for _, proj := range in.Projects {
		if proj == "*" {
			continue
		}
		if _, err := tx.Project(proj); err != nil {
			return TokenView{}, apierr.Validation("Project=%s does not exist", proj)
		}
	}
	t.CreatedAt = tx.Now()
	if err := tx.InsertAPIToken(t, secret); err != nil {
		return TokenView{}, err
	}
	if err := tx.Event(store.NewEvent{Type: "api-token-created", Actor: p.Actor(), Project: scope, Environment: in.Environment, Data: TokenEventData(t)}); err != nil {
		return TokenView{}, err
	}
	t.Hint = secret
	return viewToken(t), nil
}

// DeleteAPIToken deletes the API token with secret (or with the id the
// list shows) as p (who needs the delete permission of its type), with its
// event; an unknown token is a no-op, as in Unleash.
func DeleteAPIToken(tx *store.Tx, p *Principal, secret string) error {
	if !p.Can(PermDeleteClientToken, "", "") && !p.Can(PermDeleteFrontendToken, "", "") {
		return Forbidden(PermDeleteClientToken, "")
	}
	hash := store.HashSecret(secret)
	t, err := tx.APITokenByHash(hash)
	if apierr.IsKind(err, apierr.KindNotFound) && isTokenID(secret) {
		// Not a secret but a token's id, as the list shows it.
		hash = secret
		t, err = tx.APITokenByHash(hash)
	}
	if apierr.IsKind(err, apierr.KindNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := p.Require(tokenPermissions[t.Type][2], "", ""); err != nil {
		return err
	}
	if _, err := tx.DeleteAPIToken(hash); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "api-token-deleted", Actor: p.Actor(), Project: viewToken(t).Project, Environment: t.Environment, PreData: TokenEventData(t)})
}

// isTokenID reports whether s has the shape of a TokenView.ID (a hex
// SHA-256), which no secret has (secrets carry ':' and '.').
func isTokenID(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// SetAPITokenExpiry changes when the API token with secret expires as p
// (who needs the create permission of its type), with its event; an
// unknown token is a no-op, as in Unleash.
func SetAPITokenExpiry(tx *store.Tx, p *Principal, secret string, expiresAt *time.Time) error {
	if expiresAt == nil {
		return apierr.Validation("The `expiresAt` property is required. It was not present on the data you sent.")
	}
	hash := store.HashSecret(secret)
	t, err := tx.APITokenByHash(hash)
	if apierr.IsKind(err, apierr.KindNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := p.Require(tokenPermissions[t.Type][1], "", ""); err != nil {
		return err
	}
	if err := tx.SetAPITokenExpiry(hash, expiresAt); err != nil {
		return err
	}
	old, updated := TokenEventData(t), TokenEventData(t)
	old["expiresAt"], updated["expiresAt"] = t.ExpiresAt, expiresAt
	return tx.Event(store.NewEvent{Type: "api-token-updated", Actor: p.Actor(), Project: viewToken(t).Project, Environment: t.Environment,
		Data: updated, PreData: old})
}

// TokenScope splits "<project>:<environment>.<secret>"; missing parts are "*".
func TokenScope(secret string) (project, environment string) {
	project, environment = "*", "*"
	colon := strings.Index(secret, ":")
	if colon < 0 {
		return
	}
	if colon > 0 {
		project = secret[:colon]
	}
	rest := secret[colon+1:]
	if dot := strings.Index(rest, "."); dot > 0 {
		environment = rest[:dot]
	}
	return
}

// BootstrapAPITokens creates the initial admin, client and frontend tokens
// with the given secrets, as the system and with their events, when the
// database holds no API token yet; a secret listed twice is stored once.
// It reports whether it created them.
func BootstrapAPITokens(tx *store.Tx, admins, clients, frontends []string) (bool, error) {
	n, err := tx.CountAPITokens()
	if err != nil || n > 0 {
		return false, err
	}
	kinds := []struct {
		typ     string
		secrets []string
	}{{store.TokenAdmin, admins}, {store.TokenClient, clients}, {store.TokenFrontend, frontends}}
	seen := map[string]bool{}
	for _, k := range kinds {
		for _, secret := range k.secrets {
			if seen[secret] {
				continue
			}
			seen[secret] = true
			if err := insertSystemToken(tx, "admin", k.typ, secret); err != nil {
				return false, err
			}
		}
	}
	return true, nil
}

// EnsureAPIToken stores an API token of type typ with a caller-chosen
// secret, as the system and with its event, unless a token with that
// secret exists.
func EnsureAPIToken(tx *store.Tx, name, typ, secret string) error {
	_, err := tx.APITokenByHash(store.HashSecret(secret))
	if !apierr.IsKind(err, apierr.KindNotFound) {
		return err
	}
	return insertSystemToken(tx, name, typ, secret)
}

// insertSystemToken stores one API token, scoped by its secret, as the
// system and writes its event.
func insertSystemToken(tx *store.Tx, name, typ, secret string) error {
	project, env := TokenScope(secret)
	t := store.APIToken{TokenName: name, Type: typ, Environment: env, Projects: []string{project}, CreatedAt: tx.Now()}
	if err := tx.InsertAPIToken(t, secret); err != nil {
		return err
	}
	t.Hint = store.SecretHint(secret)
	return tx.Event(store.NewEvent{Type: "api-token-created", Actor: SystemActor, Project: project, Environment: env, Data: TokenEventData(t)})
}
