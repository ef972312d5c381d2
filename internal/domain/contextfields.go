package domain

import (
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// ContextFieldInput is a context field as an admin call creates or updates
// it; absent properties keep their values on update.
type ContextFieldInput struct {
	Name        string              `json:"name"`
	Description *string             `json:"description"`
	Stickiness  *bool               `json:"stickiness"`
	SortOrder   *int32              `json:"sortOrder"`
	LegalValues *[]store.LegalValue `json:"legalValues"`
}

func (b ContextFieldInput) apply(f *store.ContextField) error {
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

// CreateContextField creates a context field as p, with its event.
func CreateContextField(tx *store.Tx, p *Principal, in ContextFieldInput) (store.ContextField, error) {
	if err := p.Require(PermCreateContextField, "", ""); err != nil {
		return store.ContextField{}, err
	}
	if err := CheckResourceName("name", in.Name); err != nil {
		return store.ContextField{}, err
	}
	f := store.ContextField{Name: in.Name, SortOrder: 10, LegalValues: []store.LegalValue{}}
	if err := in.apply(&f); err != nil {
		return store.ContextField{}, err
	}
	f.CreatedAt = tx.Now()
	if err := tx.InsertContextField(f); err != nil {
		return store.ContextField{}, err
	}
	return f, tx.Event(store.NewEvent{Type: "context-field-created", Actor: p.Actor(), Data: f})
}

// changeContextField loads a field, lets change modify it and stores it
// with its context-field-updated event.
func changeContextField(tx *store.Tx, p *Principal, name string, change func(*store.ContextField) error) error {
	if err := p.Require(PermUpdateContextField, "", ""); err != nil {
		return err
	}
	old, err := tx.ContextField(name)
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
}

// UpdateContextField changes a context field as p, with its event.
func UpdateContextField(tx *store.Tx, p *Principal, name string, in ContextFieldInput) error {
	return changeContextField(tx, p, name, in.apply)
}

// AddLegalValue adds a legal value to a context field, or replaces the one
// with the same value, as p.
func AddLegalValue(tx *store.Tx, p *Principal, name string, v store.LegalValue) error {
	if err := p.Require(PermUpdateContextField, "", ""); err != nil {
		return err
	}
	if strings.TrimSpace(v.Value) == "" {
		return apierr.Validation("The `value` property is required. It was not present on the data you sent.")
	}
	return changeContextField(tx, p, name, func(f *store.ContextField) error {
		for i := range f.LegalValues {
			if f.LegalValues[i].Value == v.Value {
				f.LegalValues[i] = v
				return nil
			}
		}
		f.LegalValues = append(f.LegalValues, v)
		return nil
	})
}

// RemoveLegalValue removes a legal value from a context field as p.
func RemoveLegalValue(tx *store.Tx, p *Principal, name, value string) error {
	return changeContextField(tx, p, name, func(f *store.ContextField) error {
		kept := f.LegalValues[:0]
		for _, v := range f.LegalValues {
			if v.Value != value {
				kept = append(kept, v)
			}
		}
		f.LegalValues = kept
		return nil
	})
}

// DeleteContextField deletes a context field no constraint uses as p,
// with its event.
func DeleteContextField(tx *store.Tx, p *Principal, name string) error {
	if err := p.Require(PermDeleteContextField, "", ""); err != nil {
		return err
	}
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
}

// ValidateContextFieldName refuses a name that is not a valid resource
// name (400) or that a context field already has (409).
func ValidateContextFieldName(q store.Q, name string) error {
	if err := CheckResourceName("name", name); err != nil {
		return err
	}
	_, err := q.ContextField(name)
	switch {
	case err == nil:
		return apierr.Conflict("A context field with that name already exist")
	case apierr.IsKind(err, apierr.KindNotFound):
		return nil
	default:
		return err
	}
}
