package server

import (
	"context"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// Bootstrap creates the INIT_*_API_TOKENS when the database holds no API
// token yet (domain.BootstrapAPITokens). If none is configured for admin,
// it creates an admin token and returns its secret, which the caller
// prints once; otherwise the returned secret is "".
func (s *Server) Bootstrap(ctx context.Context) (generatedAdmin string, err error) {
	admins := s.cfg.InitAdminTokens
	if len(admins) == 0 {
		generatedAdmin = "*:*." + RandomHex(28)
		admins = []string{generatedAdmin}
	}
	var created bool
	err = s.store.Tx(ctx, func(tx *store.Tx) (err error) {
		created, err = domain.BootstrapAPITokens(tx, admins, s.cfg.InitClientTokens, s.cfg.InitFrontendTokens)
		return err
	})
	if err != nil || !created {
		return "", err
	}
	return generatedAdmin, nil
}

// RandomHex returns n random bytes as hex (domain.RandomHex).
func RandomHex(n int) string { return domain.RandomHex(n) }

// tokenScope splits "<project>:<environment>.<secret>" (domain.TokenScope).
func tokenScope(secret string) (project, environment string) { return domain.TokenScope(secret) }

// EnsureAPIToken stores an API token with a caller-chosen secret, as the
// system user and with its event, unless a token with that secret exists
// (domain.EnsureAPIToken). typ is store.TokenAdmin, store.TokenClient or
// store.TokenFrontend.
func (s *Server) EnsureAPIToken(ctx context.Context, name, typ, secret string) error {
	return s.store.Tx(ctx, func(tx *store.Tx) error { return domain.EnsureAPIToken(tx, name, typ, secret) })
}

// BootstrapAdminUser creates the first person, with the Admin role, when
// the database holds nobody yet (domain.BootstrapAdminUser): named by
// INIT_ADMIN_USER (default admin) with INIT_ADMIN_PASSWORD, or with a
// generated password, which it returns so the caller prints it once. It
// returns the name of the created admin ("" when people already existed).
func (s *Server) BootstrapAdminUser(ctx context.Context) (name, generatedPassword string, err error) {
	name, password := s.cfg.InitAdminUser, s.cfg.InitAdminPassword
	if name == "" {
		name = "admin"
	}
	if password == "" {
		generatedPassword = RandomHex(12)
		password = generatedPassword
	}
	var created bool
	err = s.store.Tx(ctx, func(tx *store.Tx) (err error) {
		created, err = domain.BootstrapAdminUser(tx, name, password)
		return err
	})
	if err != nil || !created {
		return "", "", err
	}
	return name, generatedPassword, nil
}

// BootstrapSSO stores the OIDC_* settings (and DISABLE_PASSWORD_SIGN_IN)
// as the system when the database holds none yet (sso.SeedFromEnv).
func (s *Server) BootstrapSSO(ctx context.Context) error {
	return s.sso.SeedFromEnv(ctx, domain.SystemActor)
}
