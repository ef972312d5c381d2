package domain

import (
	"encoding/json"
	"slices"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// strategyParameterTypes are the accepted strategy parameter types.
var strategyParameterTypes = []string{"string", "percentage", "list", "number", "boolean"}

// StrategyTypeInput is a strategy type as an admin call creates or updates it. Pointer
// fields tell "absent" (left untouched on update) from "empty".
type StrategyTypeInput struct {
	Name        string                     `json:"name"`
	Title       *string                    `json:"title"`
	DisplayName *string                    `json:"displayName"`
	Description *string                    `json:"description"`
	Parameters  *[]store.StrategyParameter `json:"parameters"`
	Deprecated  *bool                      `json:"deprecated"`
}

func (b StrategyTypeInput) validateParameters() error {
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

// CreateStrategyType creates a custom strategy type as p, with its event.
func CreateStrategyType(tx *store.Tx, p *Principal, in StrategyTypeInput) (store.StrategyType, error) {
	if err := p.Require(PermCreateStrategy, "", ""); err != nil {
		return store.StrategyType{}, err
	}
	if err := CheckResourceName("name", in.Name); err != nil {
		return store.StrategyType{}, err
	}
	if err := in.validateParameters(); err != nil {
		return store.StrategyType{}, err
	}
	t := store.StrategyType{Name: in.Name, Title: in.Title, DisplayName: in.DisplayName, Description: in.Description,
		Editable: true, Deprecated: in.Deprecated != nil && *in.Deprecated, SortOrder: 9999, Parameters: *in.Parameters}
	if err := tx.InsertStrategyType(t); err != nil {
		return store.StrategyType{}, err
	}
	return t, tx.Event(store.NewEvent{Type: "strategy-created", Actor: p.Actor(), Data: t})
}

// UpdateStrategyType changes a custom strategy type as p, with its event;
// properties the input leaves out keep their values (the parameters are
// required).
func UpdateStrategyType(tx *store.Tx, p *Principal, name string, in StrategyTypeInput) error {
	if err := p.Require(PermUpdateStrategy, "", ""); err != nil {
		return err
	}
	if err := in.validateParameters(); err != nil {
		return err
	}
	old, err := tx.StrategyType(name)
	if err != nil {
		return err
	}
	if !old.Editable {
		return bundledStrategyError(name)
	}
	t := old
	t.Parameters = *in.Parameters
	if in.Description != nil {
		t.Description = in.Description
	}
	if in.Title != nil {
		t.Title = in.Title
	}
	if in.DisplayName != nil {
		t.DisplayName = in.DisplayName
	}
	if err := tx.UpdateStrategyType(t); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "strategy-updated", Actor: p.Actor(), Data: t, PreData: old})
}

// SetStrategyTypeDeprecated deprecates or reactivates a strategy type
// (built-in ones too) as p; the event is only written when the state
// changes.
func SetStrategyTypeDeprecated(tx *store.Tx, p *Principal, name string, deprecated bool) error {
	if err := p.Require(PermUpdateStrategy, "", ""); err != nil {
		return err
	}
	event := "strategy-reactivated"
	if deprecated {
		event = "strategy-deprecated"
	}
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
}

// DeleteStrategyType deletes a custom strategy type no flag uses as p,
// with its event.
func DeleteStrategyType(tx *store.Tx, p *Principal, name string) error {
	if err := p.Require(PermDeleteStrategy, "", ""); err != nil {
		return err
	}
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
}

// SetFeatureTypeLifetime sets how many days a flag of type id (any case)
// lives before it is potentially stale as p, with its event; lifetimeDays
// is an integer, and 0 or null means never.
func SetFeatureTypeLifetime(tx *store.Tx, p *Principal, id string, lifetimeDays json.RawMessage) (store.FeatureType, error) {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return store.FeatureType{}, err
	}
	days, err := parseLifetime(lifetimeDays)
	if err != nil {
		return store.FeatureType{}, err
	}
	id = lowerASCII(id)
	old, err := tx.FeatureType(id)
	if err != nil {
		return store.FeatureType{}, err
	}
	if err := tx.SetFeatureTypeLifetime(id, days); err != nil {
		return store.FeatureType{}, err
	}
	updated := old
	updated.LifetimeDays = days
	return updated, tx.Event(store.NewEvent{Type: "feature-type-updated", Actor: p.Actor(), Data: updated, PreData: old})
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
