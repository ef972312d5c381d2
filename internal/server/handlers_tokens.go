package server

import (
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// tokenPermissions are the read/create/delete permissions per token type.
var tokenPermissions = map[string][3]string{
	store.TokenClient:   {domain.PermReadClientToken, domain.PermCreateClientToken, domain.PermDeleteClientToken},
	store.TokenFrontend: {domain.PermReadFrontendToken, domain.PermCreateFrontendToken, domain.PermDeleteFrontendToken},
	store.TokenAdmin:    {domain.PermAdmin, domain.PermAdmin, domain.PermAdmin},
}

// tokenView is a token in lists: the secret is shown only by its hint.
type tokenView struct {
	store.APIToken
	Project string `json:"project"`
}

func viewToken(t store.APIToken) tokenView {
	project := "*"
	if len(t.Projects) == 1 {
		project = t.Projects[0]
	} else if len(t.Projects) > 1 {
		project = "[]"
	}
	return tokenView{APIToken: t, Project: project}
}

func (s *Server) listAPITokens(w http.ResponseWriter, r *http.Request) error {
	p := domain.PrincipalFrom(r.Context())
	all, err := s.store.Q(r.Context()).APITokens()
	if err != nil {
		return err
	}
	out := []tokenView{}
	readable := false
	for typ, perms := range tokenPermissions {
		if p.Can(perms[0], "", "") {
			readable = true
			for _, t := range all {
				if t.Type == typ {
					out = append(out, viewToken(t))
				}
			}
		}
	}
	if !readable {
		return domain.Forbidden(domain.PermReadClientToken, "")
	}
	slices.SortFunc(out, func(a, b tokenView) int { return a.CreatedAt.Compare(b.CreatedAt) })
	return httpjson.Write(w, http.StatusOK, map[string]any{"tokens": out})
}

// createTokenBody is the body of POST /api/admin/api-tokens.
type createTokenBody struct {
	TokenName   string     `json:"tokenName"`
	Username    string     `json:"username"`
	Type        string     `json:"type"`
	Environment string     `json:"environment"`
	Project     string     `json:"project"`
	Projects    []string   `json:"projects"`
	ExpiresAt   *time.Time `json:"expiresAt"`
}

func (b *createTokenBody) normalize() error {
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

func (s *Server) createAPIToken(w http.ResponseWriter, r *http.Request) error {
	var body createTokenBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if err := body.normalize(); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	if perm := tokenPermissions[body.Type][1]; !p.Can(perm, "", "") {
		return domain.Forbidden(perm, "")
	}
	scope := "*"
	if len(body.Projects) == 1 {
		scope = body.Projects[0]
	} else {
		scope = "[]"
	}
	secret := scope + ":" + body.Environment + "." + RandomHex(28)
	t := store.APIToken{TokenName: body.TokenName, Type: body.Type, Environment: body.Environment, Projects: body.Projects, ExpiresAt: body.ExpiresAt}
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if body.Environment != "*" {
			if _, err := tx.Environment(body.Environment); err != nil {
				return apierr.Validation("Environment=%s does not exist", body.Environment)
			}
		}
		for _, proj := range body.Projects {
			if proj == "*" {
				continue
			}
			if _, err := tx.Project(proj); err != nil {
				return apierr.Validation("Project=%s does not exist", proj)
			}
		}
		t.CreatedAt = tx.Now()
		if err := tx.InsertAPIToken(t, secret); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "api-token-created", Actor: p.Actor(), Project: scope, Environment: body.Environment, Data: tokenEventData(t)})
	})
	if err != nil {
		return err
	}
	t.Hint = secret
	w.Header().Set("Location", "api-tokens")
	return httpjson.Write(w, http.StatusCreated, viewToken(t))
}

func (s *Server) deleteAPIToken(w http.ResponseWriter, r *http.Request) error {
	p := domain.PrincipalFrom(r.Context())
	if !p.Can(domain.PermDeleteClientToken, "", "") && !p.Can(domain.PermDeleteFrontendToken, "", "") {
		return domain.Forbidden(domain.PermDeleteClientToken, "")
	}
	hash := store.HashSecret(r.PathValue("token"))
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		t, err := tx.APITokenByHash(hash)
		if apierr.IsKind(err, apierr.KindNotFound) {
			return nil // deleting an unknown token is a no-op, as in Unleash
		}
		if err != nil {
			return err
		}
		if perm := tokenPermissions[t.Type][2]; !p.Can(perm, "", "") {
			return domain.Forbidden(perm, "")
		}
		if _, err := tx.DeleteAPIToken(hash); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "api-token-deleted", Actor: p.Actor(), Project: viewToken(t).Project, Environment: t.Environment, PreData: tokenEventData(t)})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// updateTokenBody is the body of PUT /api/admin/api-tokens/{token}.
type updateTokenBody struct {
	ExpiresAt *time.Time `json:"expiresAt"`
}

func (s *Server) updateAPIToken(w http.ResponseWriter, r *http.Request) error {
	var body updateTokenBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if body.ExpiresAt == nil {
		return apierr.Validation("The `expiresAt` property is required. It was not present on the data you sent.")
	}
	p := domain.PrincipalFrom(r.Context())
	hash := store.HashSecret(r.PathValue("token"))
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		t, err := tx.APITokenByHash(hash)
		if apierr.IsKind(err, apierr.KindNotFound) {
			return nil // as Unleash: updating an unknown token is a no-op
		}
		if err != nil {
			return err
		}
		if perm := tokenPermissions[t.Type][1]; !p.Can(perm, "", "") {
			return domain.Forbidden(perm, "")
		}
		if err := tx.SetAPITokenExpiry(hash, body.ExpiresAt); err != nil {
			return err
		}
		old, updated := tokenEventData(t), tokenEventData(t)
		old["expiresAt"], updated["expiresAt"] = t.ExpiresAt, body.ExpiresAt
		return tx.Event(store.NewEvent{Type: "api-token-updated", Actor: p.Actor(), Project: viewToken(t).Project, Environment: t.Environment,
			Data: updated, PreData: old})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}
