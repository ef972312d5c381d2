package server

import (
	"context"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// Bootstrap creates the INIT_*_API_TOKENS when the database holds no API
// token yet. If none is configured for admin, it creates an admin token
// and returns its secret, which the caller prints once; otherwise the
// returned secret is "".
func (s *Server) Bootstrap(ctx context.Context) (generatedAdmin string, err error) {
	err = s.store.Tx(ctx, func(tx *store.Tx) error {
		n, err := tx.CountAPITokens()
		if err != nil || n > 0 {
			return err
		}
		admins := s.cfg.InitAdminTokens
		if len(admins) == 0 {
			generatedAdmin = "*:*." + RandomHex(28)
			admins = []string{generatedAdmin}
		}
		kinds := []struct {
			typ     string
			secrets []string
		}{{store.TokenAdmin, admins}, {store.TokenClient, s.cfg.InitClientTokens}, {store.TokenFrontend, s.cfg.InitFrontendTokens}}
		seen := map[string]bool{}
		for _, k := range kinds {
			for _, secret := range k.secrets {
				if seen[secret] {
					continue
				}
				seen[secret] = true
				if err := insertToken(tx, domain.SystemActor, "admin", k.typ, secret); err != nil {
					return err
				}
			}
		}
		return nil
	})
	return generatedAdmin, err
}

// insertToken stores one API token and writes its event.
func insertToken(tx *store.Tx, actor store.Actor, name, typ, secret string) error {
	project, env := tokenScope(secret)
	t := store.APIToken{TokenName: name, Type: typ, Environment: env, Projects: []string{project}, CreatedAt: tx.Now()}
	if err := tx.InsertAPIToken(t, secret); err != nil {
		return err
	}
	t.Hint = store.SecretHint(secret)
	return tx.Event(store.NewEvent{Type: "api-token-created", Actor: actor, Project: project, Environment: env, Data: domain.TokenEventData(t)})
}

// RandomHex returns n random bytes as hex (domain.RandomHex).
func RandomHex(n int) string { return domain.RandomHex(n) }

// EnsureAPIToken stores an API token with a caller-chosen secret, as the
// system user and with its event, unless a token with that secret exists.
// typ is store.TokenAdmin, store.TokenClient or store.TokenFrontend.
func (s *Server) EnsureAPIToken(ctx context.Context, name, typ, secret string) error {
	return s.store.Tx(ctx, func(tx *store.Tx) error {
		_, err := tx.APITokenByHash(store.HashSecret(secret))
		if !apierr.IsKind(err, apierr.KindNotFound) {
			return err
		}
		return insertToken(tx, domain.SystemActor, name, typ, secret)
	})
}
