package server

import (
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// rootRole describes one of the three root roles.
type rootRole struct {
	ID          int     `json:"id"`
	Type        string  `json:"type"`
	Name        string  `json:"name"`
	Description string  `json:"description"`
	Project     *string `json:"project"`
}

// rootRoles are Admin (1), Editor (2) and Viewer (3), Unleash's ids.
var rootRoles = []rootRole{
	{ID: 1, Type: "root", Name: domain.RoleAdmin, Description: "Users with the root admin role have superuser access to Bunting and can perform any operation."},
	{ID: 2, Type: "root", Name: domain.RoleEditor, Description: "Users with the root editor role can change flags, strategies, segments, context fields and tags, but cannot manage API tokens or users."},
	{ID: 3, Type: "root", Name: domain.RoleViewer, Description: "Users with the root viewer role can only read resources."},
}

func roleByName(name string) rootRole {
	for _, r := range rootRoles {
		if r.Name == name {
			return r
		}
	}
	return rootRoles[2]
}

// parseRootRole accepts a role id (1–3) or name (Admin, Editor, Viewer).
func parseRootRole(raw json.RawMessage) (string, error) {
	var id int
	if json.Unmarshal(raw, &id) == nil {
		for _, r := range rootRoles {
			if r.ID == id {
				return r.Name, nil
			}
		}
	}
	var name string
	if json.Unmarshal(raw, &name) == nil {
		for _, r := range rootRoles {
			if strings.EqualFold(r.Name, name) {
				return r.Name, nil
			}
		}
	}
	return "", apierr.Validation("The `rootRole` property must be one of 1 (Admin), 2 (Editor) or 3 (Viewer). You sent %s.", string(raw))
}

// userProfile is the body of GET /api/admin/user/profile.
type userProfile struct {
	RootRole rootRole `json:"rootRole"`
	Projects []string `json:"projects"`
	Features []string `json:"features"`
}

// userProfile answers for the calling principal: a user's root role, or
// Admin for an admin API token. The open-source role model has no project
// membership, so every principal sees every project.
func (s *Server) userProfile(w http.ResponseWriter, r *http.Request) error {
	p := domain.PrincipalFrom(r.Context())
	projects, err := s.store.Q(r.Context()).Projects()
	if err != nil {
		return err
	}
	ids := make([]string, 0, len(projects))
	for _, pr := range projects {
		ids = append(ids, pr.ID)
	}
	return httpjson.Write(w, http.StatusOK, userProfile{RootRole: roleByName(p.RootRole), Projects: ids, Features: []string{}})
}

// serviceAccountView is a service account as the API shows it.
type serviceAccountView struct {
	ID        int64             `json:"id"`
	Username  *string           `json:"username"`
	Name      *string           `json:"name"`
	RootRole  int               `json:"rootRole"`
	CreatedAt time.Time         `json:"createdAt"`
	Tokens    []store.UserToken `json:"tokens,omitempty"`
}

func viewServiceAccount(u store.User) serviceAccountView {
	return serviceAccountView{ID: u.ID, Username: u.Username, Name: u.Name, RootRole: roleByName(u.RootRole).ID, CreatedAt: u.CreatedAt}
}

// serviceAccountBody is the body of service-account create and update.
type serviceAccountBody struct {
	Username string          `json:"username"`
	Name     *string         `json:"name"`
	RootRole json.RawMessage `json:"rootRole"`
}

func (s *Server) listServiceAccounts(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	users, err := q.ServiceAccounts()
	if err != nil {
		return err
	}
	out := make([]serviceAccountView, 0, len(users))
	for _, u := range users {
		v := viewServiceAccount(u)
		if v.Tokens, err = q.UserTokens(u.ID); err != nil {
			return err
		}
		out = append(out, v)
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"serviceAccounts": out, "rootRoles": rootRoles})
}

func (s *Server) createServiceAccount(w http.ResponseWriter, r *http.Request) error {
	var body serviceAccountBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if u := strings.TrimSpace(body.Username); u == "" || len(u) > 100 || u != body.Username {
		return apierr.Validation("The `username` property is required: 1 to 100 characters without surrounding spaces. You sent %q.", body.Username)
	}
	if len(body.RootRole) == 0 {
		return apierr.Validation("The `rootRole` property is required. It was not present on the data you sent.")
	}
	role, err := parseRootRole(body.RootRole)
	if err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	u := store.User{Username: &body.Username, Name: body.Name, RootRole: role, IsService: true}
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		u.CreatedAt = tx.Now()
		id, err := tx.InsertUser(u)
		if err != nil {
			return err
		}
		u.ID = id
		return tx.Event(store.NewEvent{Type: "service-account-created", Actor: p.Actor(), Data: viewServiceAccount(u)})
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusCreated, viewServiceAccount(u))
}

func pathID(r *http.Request, name string) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue(name), 10, 64)
	if err != nil || id < 1 {
		return 0, apierr.Validation("The `%s` path parameter must be a positive integer. You sent %q.", name, r.PathValue(name))
	}
	return id, nil
}

func (s *Server) updateServiceAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var body serviceAccountBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	var u store.User
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.ServiceAccount(id)
		if err != nil {
			return err
		}
		u = old
		if body.Name != nil {
			u.Name = body.Name
		}
		if len(body.RootRole) > 0 {
			if u.RootRole, err = parseRootRole(body.RootRole); err != nil {
				return err
			}
		}
		if err := tx.UpdateUser(u); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "service-account-updated", Actor: p.Actor(), Data: viewServiceAccount(u), PreData: viewServiceAccount(old)})
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, viewServiceAccount(u))
}

func (s *Server) deleteServiceAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.ServiceAccount(id)
		if err != nil {
			return err
		}
		if err := tx.DeleteUser(id); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "service-account-deleted", Actor: p.Actor(), PreData: viewServiceAccount(old)})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// userTokenBody is the body that creates a personal or service-account token.
type userTokenBody struct {
	Description string     `json:"description"`
	ExpiresAt   *time.Time `json:"expiresAt"`
}

// createdUserToken is a new token with its secret, shown only once.
type createdUserToken struct {
	store.UserToken
	Secret string `json:"secret"`
}

// issueUserToken creates a token for user id and writes pat-created.
func (s *Server) issueUserToken(r *http.Request, userID int64, mustBeService bool) (createdUserToken, error) {
	var body userTokenBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return createdUserToken{}, err
	}
	if strings.TrimSpace(body.Description) == "" {
		return createdUserToken{}, apierr.Validation("The `description` property is required. It was not present on the data you sent.")
	}
	if body.ExpiresAt != nil && !body.ExpiresAt.After(s.store.Now()) {
		return createdUserToken{}, apierr.Validation("The `expiresAt` property must be in the future.")
	}
	p := domain.PrincipalFrom(r.Context())
	secret := "user:" + RandomHex(28)
	t := store.UserToken{UserID: userID, Description: &body.Description, ExpiresAt: body.ExpiresAt, Hint: store.SecretHint(secret)}
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if mustBeService {
			if _, err := tx.ServiceAccount(userID); err != nil {
				return err
			}
		}
		t.CreatedAt = tx.Now()
		id, err := tx.InsertUserToken(t, secret)
		if err != nil {
			return err
		}
		t.ID = id
		return tx.Event(store.NewEvent{Type: "pat-created", Actor: p.Actor(), Data: t})
	})
	return createdUserToken{UserToken: t, Secret: secret}, err
}

// revokeUserToken deletes one of a user's tokens and writes pat-deleted.
func (s *Server) revokeUserToken(r *http.Request, userID int64) error {
	tokenID, err := pathID(r, "tokenId")
	if err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	return s.store.Tx(r.Context(), func(tx *store.Tx) error {
		removed, err := tx.DeleteUserToken(userID, tokenID)
		if err != nil {
			return err
		}
		if !removed {
			return apierr.NotFound("Could not find token with id %d", tokenID)
		}
		return tx.Event(store.NewEvent{Type: "pat-deleted", Actor: p.Actor(), PreData: map[string]int64{"id": tokenID, "userId": userID}})
	})
}

func (s *Server) listServiceAccountTokens(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	q := s.store.Q(r.Context())
	if _, err := q.ServiceAccount(id); err != nil {
		return err
	}
	tokens, err := q.UserTokens(id)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"tokens": tokens})
}

func (s *Server) createServiceAccountToken(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	t, err := s.issueUserToken(r, id, true)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusCreated, t)
}

func (s *Server) deleteServiceAccountToken(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	if err := s.revokeUserToken(r, id); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// callingUser is the user behind the request; admin API tokens have none.
func callingUser(r *http.Request) (*store.User, error) {
	p := domain.PrincipalFrom(r.Context())
	if p == nil || p.User == nil {
		return nil, apierr.Validation("Personal access tokens belong to a user; an admin API token has no user. Use a user's or service account's token.")
	}
	return p.User, nil
}

func (s *Server) listPersonalTokens(w http.ResponseWriter, r *http.Request) error {
	u, err := callingUser(r)
	if err != nil {
		return err
	}
	tokens, err := s.store.Q(r.Context()).UserTokens(u.ID)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"pats": tokens})
}

func (s *Server) createPersonalToken(w http.ResponseWriter, r *http.Request) error {
	u, err := callingUser(r)
	if err != nil {
		return err
	}
	t, err := s.issueUserToken(r, u.ID, false)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusCreated, t)
}

func (s *Server) deletePersonalToken(w http.ResponseWriter, r *http.Request) error {
	u, err := callingUser(r)
	if err != nil {
		return err
	}
	if err := s.revokeUserToken(r, u.ID); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}
