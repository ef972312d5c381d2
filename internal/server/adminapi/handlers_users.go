package adminapi

import (
	"net/http"
	"slices"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// userProfile is the body of GET /api/admin/user/profile.
type userProfile struct {
	RootRole domain.RootRole `json:"rootRole"`
	Projects []string        `json:"projects"`
	Groups   []profileGroup  `json:"groups"`
	Features []string        `json:"features"`
}

// profileGroup is a group the caller is in, as the profile lists it.
type profileGroup struct {
	ID          int64    `json:"id"`
	Name        string   `json:"name"`
	Description *string  `json:"description"`
	MappingsSSO []string `json:"mappingsSSO"`
	RootRole    *int64   `json:"rootRole"`
}

// userProfile answers for the calling principal: a user's root role, the
// projects they hold a role in (and default) and their groups; for an
// admin API token, Admin and every project.
func (s *API) userProfile(w http.ResponseWriter, r *http.Request) error {
	p := domain.PrincipalFrom(r.Context())
	q := s.store.Q(r.Context())
	// As in Unleash, where a root role is held in the default project,
	// everyone is listed as a member of default.
	out := userProfile{Projects: p.Grants().Projects(), Groups: []profileGroup{}, Features: []string{}}
	if !slices.Contains(out.Projects, "default") {
		out.Projects = append([]string{"default"}, out.Projects...)
	}
	role := p.RootRole
	if p.Kind == domain.KindAdminToken {
		role = domain.RoleAdmin
		projects, err := q.Projects()
		if err != nil {
			return err
		}
		out.Projects = make([]string, 0, len(projects))
		for _, pr := range projects {
			out.Projects = append(out.Projects, pr.ID)
		}
	}
	var err error
	if out.RootRole, err = domain.RootRoleOf(q, role); err != nil {
		return err
	}
	if p.UserID != nil && p.Kind == domain.KindUser {
		mine, err := q.GroupsOfUser(*p.UserID)
		if err != nil {
			return err
		}
		for _, m := range mine {
			g, err := q.Group(m.GroupID)
			if err != nil {
				return err
			}
			out.Groups = append(out.Groups, profileGroup{ID: g.ID, Name: g.Name, Description: g.Description, MappingsSSO: g.MappingsSSO, RootRole: g.RootRole})
		}
	}
	return httpjson.Write(w, http.StatusOK, out)
}

func (s *API) listServiceAccounts(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	users, err := q.ServiceAccounts()
	if err != nil {
		return err
	}
	out := make([]domain.ServiceAccountView, 0, len(users))
	for _, u := range users {
		v := domain.ViewServiceAccount(u)
		if v.Tokens, err = q.UserTokens(u.ID); err != nil {
			return err
		}
		out = append(out, v)
	}
	roles, err := domain.RootRoles(q)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"serviceAccounts": out, "rootRoles": roles})
}

func (s *API) createServiceAccount(w http.ResponseWriter, r *http.Request) error {
	v, err := apply(s, r, domain.CreateServiceAccount)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusCreated, v)
}

func (s *API) updateServiceAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var body domain.ServiceAccountInput
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	var v domain.ServiceAccountView
	err = s.store.Tx(r.Context(), func(tx *store.Tx) (err error) {
		v, err = domain.UpdateServiceAccount(tx, p, id, body)
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, v)
}

func (s *API) deleteServiceAccount(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	if err := s.store.Tx(r.Context(), func(tx *store.Tx) error { return domain.DeleteServiceAccount(tx, p, id) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// issueUserToken decodes the body and creates a token for a service
// account or for the calling user (domain.IssueUserToken).
func (s *API) issueUserToken(w http.ResponseWriter, r *http.Request, serviceAccount bool, userID int64) error {
	t, err := apply(s, r, func(tx *store.Tx, p *domain.Principal, body domain.UserTokenInput) (domain.CreatedUserToken, error) {
		return domain.IssueUserToken(tx, p, serviceAccount, userID, body)
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusCreated, t)
}

// revokeUserToken deletes the path's token of a service account or of the
// calling user (domain.RevokeUserToken).
func (s *API) revokeUserToken(w http.ResponseWriter, r *http.Request, serviceAccount bool, userID int64) error {
	tokenID, err := pathID(r, "tokenId")
	if err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	if err := s.store.Tx(r.Context(), func(tx *store.Tx) error { return domain.RevokeUserToken(tx, p, serviceAccount, userID, tokenID) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *API) listServiceAccountTokens(w http.ResponseWriter, r *http.Request) error {
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
	// Under "pats", as Unleash answers (its Terraform provider reads them
	// there, and drops a token it does not find).
	return httpjson.Write(w, http.StatusOK, map[string]any{"pats": tokens})
}

func (s *API) createServiceAccountToken(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return s.issueUserToken(w, r, true, id)
}

func (s *API) deleteServiceAccountToken(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return s.revokeUserToken(w, r, true, id)
}

func (s *API) listPersonalTokens(w http.ResponseWriter, r *http.Request) error {
	u, err := domain.CallingUser(domain.PrincipalFrom(r.Context()))
	if err != nil {
		return err
	}
	tokens, err := s.store.Q(r.Context()).UserTokens(u.ID)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"pats": tokens})
}

func (s *API) createPersonalToken(w http.ResponseWriter, r *http.Request) error {
	if _, err := domain.CallingUser(domain.PrincipalFrom(r.Context())); err != nil {
		return err
	}
	return s.issueUserToken(w, r, false, 0)
}

func (s *API) deletePersonalToken(w http.ResponseWriter, r *http.Request) error {
	if _, err := domain.CallingUser(domain.PrincipalFrom(r.Context())); err != nil {
		return err
	}
	return s.revokeUserToken(w, r, false, 0)
}
