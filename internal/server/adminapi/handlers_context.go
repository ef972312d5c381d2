package adminapi

import (
	"net/http"
	"slices"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

func (s *API) listContextFields(w http.ResponseWriter, r *http.Request) error {
	fields, err := s.store.Q(r.Context()).ContextFields()
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, fields)
}

func (s *API) getContextField(w http.ResponseWriter, r *http.Request) error {
	f, err := s.store.Q(r.Context()).ContextField(r.PathValue("name"))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, f)
}

func (s *API) createContextField(w http.ResponseWriter, r *http.Request) error {
	f, err := apply(s, r, domain.CreateContextField)
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "context/%s", f.Name)
	return httpjson.Write(w, http.StatusCreated, f)
}

// changeContextField runs op on the path's context field in a transaction
// and answers 200.
func (s *API) changeContextField(w http.ResponseWriter, r *http.Request, op func(tx *store.Tx, p *domain.Principal, name string) error) error {
	p := domain.PrincipalFrom(r.Context())
	if err := s.store.Tx(r.Context(), func(tx *store.Tx) error { return op(tx, p, r.PathValue("name")) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *API) updateContextField(w http.ResponseWriter, r *http.Request) error {
	var body domain.ContextFieldInput
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	return s.changeContextField(w, r, func(tx *store.Tx, p *domain.Principal, name string) error {
		return domain.UpdateContextField(tx, p, name, body)
	})
}

func (s *API) addLegalValue(w http.ResponseWriter, r *http.Request) error {
	var v store.LegalValue
	if err := httpjson.Decode(r, 0, &v); err != nil {
		return err
	}
	return s.changeContextField(w, r, func(tx *store.Tx, p *domain.Principal, name string) error {
		return domain.AddLegalValue(tx, p, name, v)
	})
}

func (s *API) removeLegalValue(w http.ResponseWriter, r *http.Request) error {
	return s.changeContextField(w, r, func(tx *store.Tx, p *domain.Principal, name string) error {
		return domain.RemoveLegalValue(tx, p, name, r.PathValue("value"))
	})
}

// contextFieldStrategies lists where a context field is used, so a person
// sees why it cannot be deleted: strategies of flags not archived, in the
// projects the caller may see (an unknown field has no uses), as in Unleash.
func (s *API) contextFieldStrategies(w http.ResponseWriter, r *http.Request) error {
	uses, err := s.store.Q(r.Context()).StrategiesUsingContextField(r.PathValue("name"))
	if err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	uses = slices.DeleteFunc(uses, func(u store.ContextFieldUse) bool { return !p.CanSeeProject(u.ProjectID) })
	return httpjson.Write(w, http.StatusOK, contextFieldStrategies{Strategies: uses})
}

// contextFieldStrategies is the answer of GET /api/admin/context/{name}/strategies.
type contextFieldStrategies struct {
	Strategies []store.ContextFieldUse `json:"strategies"`
}

func (s *API) deleteContextField(w http.ResponseWriter, r *http.Request) error {
	return s.changeContextField(w, r, domain.DeleteContextField)
}

func (s *API) validateContextFieldName(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Name string `json:"name"`
	}
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if err := domain.ValidateContextFieldName(s.store.Q(r.Context()), body.Name); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}
