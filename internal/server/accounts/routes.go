package accounts

import (
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/server/route"
	"github.com/bunting-flags/bunting/internal/store"
)

// Register registers what the web UI needs from the admin API for people:
// sign-in and sessions, and people management.
func (s *API) Register(r route.Registrar) {
	r.Public("POST /auth/simple/login", s.login, route.JSON,
		route.API("Sessions", "Sign in with a username or email and a password (sets the session cookie)", 200, domain.SignInInput{}, domain.SessionView{}))
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
		route.API("Users", "Add a person", 201, domain.AccountInput{}, store.Account{}))
	r.Admin("PUT /api/admin/user-admin/{id}", domain.PermAdmin, s.updateAccount, route.JSON,
		route.API("Users", "Update a person", 200, domain.AccountInput{}, store.Account{}))
	r.Admin("DELETE /api/admin/user-admin/{id}", domain.PermAdmin, s.deleteAccount,
		route.API("Users", "Remove a person", 200, nil, nil))
	r.Admin("POST /api/admin/user-admin/{id}/reset-password", domain.PermAdmin, s.resetPassword, route.JSON,
		route.API("Users", "Set a person's password", 200, domain.PasswordInput{}, nil))
}
