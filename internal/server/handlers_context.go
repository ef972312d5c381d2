package server

import (
	"net/http"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// contextFieldBody is the body of context-field create and update; absent
// properties keep their values on update.
type contextFieldBody struct {
	Name        string              `json:"name"`
	Description *string             `json:"description"`
	Stickiness  *bool               `json:"stickiness"`
	SortOrder   *int32              `json:"sortOrder"`
	LegalValues *[]store.LegalValue `json:"legalValues"`
}

func (b contextFieldBody) apply(f *store.ContextField) error {
	if b.Description != nil {
		f.Description = b.Description
	}
	if b.Stickiness != nil {
		f.Stickiness = *b.Stickiness
	}
	if b.SortOrder != nil {
		f.SortOrder = int(*b.SortOrder)
	}
	if b.LegalValues != nil {
		seen := map[string]bool{}
		for i, v := range *b.LegalValues {
			if strings.TrimSpace(v.Value) == "" {
				return apierr.Validation("The `legalValues[%d].value` property is required and must not be empty.", i)
			}
			if seen[v.Value] {
				return apierr.Validation("The `legalValues` property must not repeat a value; %q appears twice.", v.Value)
			}
			seen[v.Value] = true
		}
		f.LegalValues = *b.LegalValues
	}
	return nil
}

func (s *Server) listContextFields(w http.ResponseWriter, r *http.Request) error {
	fields, err := s.store.Q(r.Context()).ContextFields()
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, fields)
}

func (s *Server) getContextField(w http.ResponseWriter, r *http.Request) error {
	f, err := s.store.Q(r.Context()).ContextField(r.PathValue("name"))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, f)
}

func (s *Server) createContextField(w http.ResponseWriter, r *http.Request) error {
	var body contextFieldBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if err := checkResourceName("name", body.Name); err != nil {
		return err
	}
	f := store.ContextField{Name: body.Name, SortOrder: 10, LegalValues: []store.LegalValue{}}
	if err := body.apply(&f); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		f.CreatedAt = tx.Now()
		if err := tx.InsertContextField(f); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "context-field-created", Actor: p.Actor(), Data: f})
	})
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "context/%s", f.Name)
	return httpjson.Write(w, http.StatusCreated, f)
}

// changeContextField loads a field, lets change modify it and stores it
// with its context-field-updated event.
func (s *Server) changeContextField(r *http.Request, change func(*store.ContextField) error) error {
	p := domain.PrincipalFrom(r.Context())
	return s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.ContextField(r.PathValue("name"))
		if err != nil {
			return err
		}
		f := old
		f.LegalValues = append([]store.LegalValue{}, old.LegalValues...)
		if err := change(&f); err != nil {
			return err
		}
		if err := tx.UpdateContextField(f); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "context-field-updated", Actor: p.Actor(), Data: f, PreData: old})
	})
}

func (s *Server) updateContextField(w http.ResponseWriter, r *http.Request) error {
	var body contextFieldBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if err := s.changeContextField(r, body.apply); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *Server) addLegalValue(w http.ResponseWriter, r *http.Request) error {
	var v store.LegalValue
	if err := httpjson.Decode(r, 0, &v); err != nil {
		return err
	}
	if strings.TrimSpace(v.Value) == "" {
		return apierr.Validation("The `value` property is required. It was not present on the data you sent.")
	}
	err := s.changeContextField(r, func(f *store.ContextField) error {
		for i := range f.LegalValues {
			if f.LegalValues[i].Value == v.Value {
				f.LegalValues[i] = v
				return nil
			}
		}
		f.LegalValues = append(f.LegalValues, v)
		return nil
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *Server) removeLegalValue(w http.ResponseWriter, r *http.Request) error {
	value := r.PathValue("value")
	err := s.changeContextField(r, func(f *store.ContextField) error {
		kept := f.LegalValues[:0]
		for _, v := range f.LegalValues {
			if v.Value != value {
				kept = append(kept, v)
			}
		}
		f.LegalValues = kept
		return nil
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *Server) deleteContextField(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	p := domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.ContextField(name)
		if err != nil {
			return err
		}
		inUse, err := tx.StrategyUsesContextField(name)
		if err != nil {
			return err
		}
		if inUse {
			return &apierr.Error{Kind: apierr.KindConflict, Name: "ConflictError",
				Message: "This context field is in use by existing flags. To delete it, first remove its usage from all flags."}
		}
		if err := tx.DeleteContextField(name); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "context-field-deleted", Actor: p.Actor(), PreData: old})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *Server) validateContextFieldName(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Name string `json:"name"`
	}
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if err := checkResourceName("name", body.Name); err != nil {
		return err
	}
	_, err := s.store.Q(r.Context()).ContextField(body.Name)
	switch {
	case err == nil:
		return apierr.Conflict("A context field with that name already exist")
	case apierr.IsKind(err, apierr.KindNotFound):
		return httpjson.WriteStatus(w, http.StatusOK)
	default:
		return err
	}
}
