package webui

import (
	"net/http"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/internal/sso"
)

// The single sign-on screen (/sso, ADMIN): the OIDC settings in one form
// and the password sign-in switch, each saved by the browser through the
// admin API's settings routes (which check, store and record the change).

func (h *Handler) ssoRoutes() {
	h.mux.HandleFunc("GET /sso", h.withSession(h.ssoSettings))
}

func (h *Handler) ssoSettings(w http.ResponseWriter, r *http.Request, s *session) {
	p := page{Title: "Single sign-on", Nav: "sso", Session: s}
	var oidc sso.Settings
	if h.failed(w, r, "sso", p, h.call(r, s, "GET", "/api/admin/auth/oidc/settings", nil, &oidc)) {
		return
	}
	// The client secret is write-only here: the page says whether one is
	// stored and never carries it.
	secretSet := oidc.Secret != ""
	oidc.Secret = ""
	var simple sso.Simple
	var roles struct {
		Roles []roleRef `json:"roles"`
	}
	for path, out := range map[string]any{"/api/admin/auth/simple/settings": &simple, "/api/admin/roles": &roles} {
		if err := h.call(r, s, "GET", path, nil, out); err != nil {
			h.fail(w, r, s, err)
			return
		}
	}
	roots := slices.DeleteFunc(roles.Roles, func(r roleRef) bool { return r.Type != "root" && r.Type != "root-custom" })
	// A default root role that no longer exists (a custom one deleted)
	// must not silently become the list's first role when the form is
	// saved: it is offered as it is, and saving keeps it.
	known := slices.ContainsFunc(roots, func(r roleRef) bool { return r.ID == int64(oidc.DefaultRootRoleID) })
	scheme := "http"
	if r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https") {
		scheme = "https"
	}
	p.Data = map[string]any{"OIDC": oidc, "SecretSet": secretSet, "Simple": simple, "Roles": roots, "RoleKnown": known,
		"Algorithms": sso.SigningAlgorithms, "Callback": scheme + "://" + r.Host + h.base + "/auth/oidc/callback"}
	h.render(w, r, "sso", p)
}
