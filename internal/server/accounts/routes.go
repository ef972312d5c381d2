package accounts

import (
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/server/route"
)

// Register registers what the web UI needs from the admin API for people:
// sign-in and sessions, and people management.
func (s *API) Register(r route.Registrar) {
	r.Public("POST /auth/simple/login", s.login, route.JSON,
		route.API("Sessions", "Sign in with a username or email and a password (sets the session cookie)", 200, domain.SignInInput{}, domain.SessionView{}))
	r.Public("GET /auth/reset/validate", s.validatePasswordLink,
		route.API("Sessions", "Whose one-time password link a token is (401 when it is used, expired or unknown)", 200, nil, passwordLinkOwner{}))
	r.Public("POST /auth/reset/password", s.usePasswordLink, route.JSON,
		route.API("Sessions", "Set a password with a one-time link's token", 200, passwordLinkUse{}, nil))
	r.Admin("POST /auth/logout", "", s.logout,
		route.API("Sessions", "Sign out (ends this session)", 204, nil, nil))
	r.Admin("POST /auth/logout-everywhere", "", s.logoutEverywhere,
		route.API("Sessions", "End every session of the calling user", 200, nil, sessionsEnded{}))
	r.Admin("GET /api/admin/user/session", "", s.currentSession,
		route.API("Sessions", "The signed-in person and their permissions", 200, nil, domain.SessionView{}))
	r.Admin("POST /api/admin/user/change-password", "", s.changeOwnPassword, route.JSON,
		route.API("Sessions", "Change the caller's password", 200, domain.PasswordInput{}, nil))
	r.Admin("GET /api/admin/user-admin", domain.PermAdmin, s.listAccounts,
		route.API("Users", "List people", 200, nil, accountList{}))
	r.Admin("POST /api/admin/user-admin", domain.PermAdmin, s.createAccount, route.JSON,
		route.API("Users", "Add a person (without a password: the answer's inviteLink lets them set one)", 201, domain.AccountInput{}, domain.UserView{}))
	r.Admin("GET /api/admin/user-admin/search", "", s.searchAccounts,
		route.API("Users", "Find people whose username, name or email contains q (2 characters or more)", 200, nil, []domain.UserView{}))
	r.Admin("POST /api/admin/user-admin/reset-password", domain.PermAdmin, s.passwordLink, route.JSON,
		route.API("Users", "Make a one-time link with which a person (id: username, email or id) sets a new password", 200, passwordLinkRequest{}, passwordLinkAnswer{}))
	r.Admin("GET /api/admin/user-admin/{id}", domain.PermAdmin, s.getAccount,
		route.API("Users", "Get a person", 200, nil, domain.UserView{}))
	r.Admin("PUT /api/admin/user-admin/{id}", domain.PermAdmin, s.updateAccount, route.JSON,
		route.API("Users", "Update a person", 200, domain.AccountInput{}, domain.UserView{}))
	r.Admin("DELETE /api/admin/user-admin/{id}", domain.PermAdmin, s.deleteAccount,
		route.API("Users", "Remove a person", 200, nil, nil))
	r.Admin("POST /api/admin/user-admin/{id}/reset-password", domain.PermAdmin, s.resetPassword, route.JSON,
		route.API("Users", "Set a person's password", 200, domain.PasswordInput{}, nil))
}
