package server

import (
	"encoding/json"
	"net/http"
	"slices"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// strategyParameterTypes are the accepted strategy parameter types.
var strategyParameterTypes = []string{"string", "percentage", "list", "number", "boolean"}

// strategyTypeBody is the body of strategy-type create and update. Pointer
// fields tell "absent" (left untouched on update) from "empty".
type strategyTypeBody struct {
	Name        string                     `json:"name"`
	Title       *string                    `json:"title"`
	DisplayName *string                    `json:"displayName"`
	Description *string                    `json:"description"`
	Parameters  *[]store.StrategyParameter `json:"parameters"`
	Deprecated  *bool                      `json:"deprecated"`
}

func (b strategyTypeBody) validateParameters() error {
	if b.Parameters == nil {
		return apierr.Validation("The `parameters` property is required. It was not present on the data you sent.")
	}
	for i, p := range *b.Parameters {
		if p.Name == "" {
			return apierr.Validation("The `parameters[%d].name` property is required. It was not present on the data you sent.", i)
		}
		if !slices.Contains(strategyParameterTypes, p.Type) {
			return apierr.Validation("The `parameters[%d].type` property must be equal to one of the allowed values: \"string\", \"percentage\", \"list\", \"number\", \"boolean\". You provided %q.", i, p.Type)
		}
	}
	return nil
}

// bundledStrategyError refuses changes to a built-in strategy type.
func bundledStrategyError(name string) error {
	return &apierr.Error{Kind: apierr.KindForbidden, Name: "InvalidOperationError",
		Message: "Cannot edit strategy " + name + ": built-in strategies are not editable."}
}

func (s *Server) listStrategyTypes(w http.ResponseWriter, r *http.Request) error {
	types, err := s.store.Q(r.Context()).StrategyTypes()
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "strategies": types})
}

func (s *Server) getStrategyType(w http.ResponseWriter, r *http.Request) error {
	t, err := s.store.Q(r.Context()).StrategyType(r.PathValue("name"))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, t)
}

func (s *Server) createStrategyType(w http.ResponseWriter, r *http.Request) error {
	var body strategyTypeBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if err := domain.CheckResourceName("name", body.Name); err != nil {
		return err
	}
	if err := body.validateParameters(); err != nil {
		return err
	}
	t := store.StrategyType{Name: body.Name, Title: body.Title, DisplayName: body.DisplayName, Description: body.Description,
		Editable: true, Deprecated: body.Deprecated != nil && *body.Deprecated, SortOrder: 9999, Parameters: *body.Parameters}
	p := domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if err := tx.InsertStrategyType(t); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "strategy-created", Actor: p.Actor(), Data: t})
	})
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "strategies/%s", t.Name)
	return httpjson.Write(w, http.StatusCreated, t)
}

// updateStrategyType changes a custom strategy type; properties the body
// leaves out keep their values.
func (s *Server) updateStrategyType(w http.ResponseWriter, r *http.Request) error {
	var body strategyTypeBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if err := body.validateParameters(); err != nil {
		return err
	}
	name := r.PathValue("name")
	p := domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.StrategyType(name)
		if err != nil {
			return err
		}
		if !old.Editable {
			return bundledStrategyError(name)
		}
		t := old
		t.Parameters = *body.Parameters
		if body.Description != nil {
			t.Description = body.Description
		}
		if body.Title != nil {
			t.Title = body.Title
		}
		if body.DisplayName != nil {
			t.DisplayName = body.DisplayName
		}
		if err := tx.UpdateStrategyType(t); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "strategy-updated", Actor: p.Actor(), Data: t, PreData: old})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *Server) deprecateStrategyType(w http.ResponseWriter, r *http.Request) error {
	return s.setStrategyTypeDeprecated(w, r, true)
}

func (s *Server) reactivateStrategyType(w http.ResponseWriter, r *http.Request) error {
	return s.setStrategyTypeDeprecated(w, r, false)
}

// setStrategyTypeDeprecated works on built-in types too; the event is only
// written when the state changes.
func (s *Server) setStrategyTypeDeprecated(w http.ResponseWriter, r *http.Request, deprecated bool) error {
	name := r.PathValue("name")
	p := domain.PrincipalFrom(r.Context())
	event := "strategy-reactivated"
	if deprecated {
		event = "strategy-deprecated"
	}
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		t, err := tx.StrategyType(name)
		if apierr.IsKind(err, apierr.KindNotFound) {
			return apierr.NotFound("Could not find strategy with name %s", name)
		}
		if err != nil || t.Deprecated == deprecated {
			return err
		}
		t.Deprecated = deprecated
		if err := tx.UpdateStrategyType(t); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: event, Actor: p.Actor(), Data: map[string]string{"name": name}})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *Server) deleteStrategyType(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	p := domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		t, err := tx.StrategyType(name)
		if err != nil {
			return err
		}
		if !t.Editable {
			return bundledStrategyError(name)
		}
		inUse, err := tx.StrategyTypeInUse(name)
		if err != nil {
			return err
		}
		if inUse {
			return &apierr.Error{Kind: apierr.KindConflict, Name: "ConflictError",
				Message: "Strategy " + name + " is used by flags. Remove it from every flag before deleting it."}
		}
		if err := tx.DeleteStrategyType(name); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "strategy-deleted", Actor: p.Actor(), Data: map[string]string{"name": name}, PreData: t})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// featureTypeLifetimeBody is the body of PUT /api/admin/feature-types/:id/lifetime.
type featureTypeLifetimeBody struct {
	LifetimeDays json.RawMessage `json:"lifetimeDays"`
}

// updateFeatureTypeLifetime sets how many days a flag of this type lives
// before it is potentially stale; 0 or null means never.
func (s *Server) updateFeatureTypeLifetime(w http.ResponseWriter, r *http.Request) error {
	var body featureTypeLifetimeBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	days, err := parseLifetime(body.LifetimeDays)
	if err != nil {
		return err
	}
	id := lowerASCII(r.PathValue("id"))
	p := domain.PrincipalFrom(r.Context())
	var updated store.FeatureType
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.FeatureType(id)
		if err != nil {
			return err
		}
		if err := tx.SetFeatureTypeLifetime(id, days); err != nil {
			return err
		}
		updated = old
		updated.LifetimeDays = days
		return tx.Event(store.NewEvent{Type: "feature-type-updated", Actor: p.Actor(), Data: updated, PreData: old})
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, updated)
}

func parseLifetime(raw json.RawMessage) (*int, error) {
	if len(raw) == 0 {
		return nil, apierr.Validation("The `lifetimeDays` property is required. It was not present on the data you sent.")
	}
	if string(raw) == "null" {
		return nil, nil
	}
	var days int64
	if err := json.Unmarshal(raw, &days); err != nil {
		return nil, apierr.Validation("The `lifetimeDays` property must be an integer or null. You sent %s.", raw)
	}
	if days < 0 || days > 2147483647 {
		return nil, apierr.Validation("The `lifetimeDays` property must be between 0 and 2147483647. You sent %d.", days)
	}
	if days == 0 {
		return nil, nil
	}
	d := int(days)
	return &d, nil
}

func lowerASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
