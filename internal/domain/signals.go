package domain

import (
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// Event types written by the signal endpoint and endpoint token operations.
const (
	EventSignalEndpointCreated = "signal-endpoint-created"
	EventSignalEndpointUpdated = "signal-endpoint-updated"
	EventSignalEndpointDeleted = "signal-endpoint-deleted"
	EventSignalTokenCreated    = "signal-endpoint-token-created"
	EventSignalTokenUpdated    = "signal-endpoint-token-updated"
	EventSignalTokenDeleted    = "signal-endpoint-token-deleted"
)

// exceedsLimit is the 400 the reference answers when a count limit is hit.
func exceedsLimit(resource string, limit int) error {
	return &apierr.Error{Kind: apierr.KindValidation, Name: "ExceedsLimitError",
		Message: "Failed to create " + resource + ". You can't create more than the established limit of " + strconv.Itoa(limit) + "."}
}

// urlSafeName reports whether s may be an endpoint name: it becomes a path
// segment, so 1 to 100 ASCII letters, digits, '.', '_', '~' or '-'. (A
// loop, not a regular expression: the bounded repetition compiles to a
// large program at start-up in every command of the binary.)
func urlSafeName(s string) bool {
	if len(s) < 1 || len(s) > 100 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '~', c == '-':
		default:
			return false
		}
	}
	return true
}

// SignalEndpointInput creates or updates a signal endpoint. Enabled left
// out means enabled on creation and unchanged on update.
type SignalEndpointInput struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Enabled     *bool   `json:"enabled"`
}

func (in SignalEndpointInput) validate() error {
	if in.Name == nil {
		return apierr.Validation("The `name` property is required.")
	}
	if !urlSafeName(*in.Name) {
		return apierr.Validation("The `name` property must be URL-safe: 1 to 100 letters, digits, '.', '_', '~' or '-'; you sent %q.", *in.Name)
	}
	return nil
}

// signalEndpointEventData is what endpoint events record (tokens omitted).
func signalEndpointEventData(e store.SignalEndpoint) map[string]any {
	return map[string]any{"id": e.ID, "name": e.Name, "description": e.Description, "enabled": e.Enabled}
}

// CreateSignalEndpoint creates a signal endpoint as p (ADMIN), at most
// limit of them, with its event, and returns it as stored.
func CreateSignalEndpoint(tx *store.Tx, p *Principal, limit int, in SignalEndpointInput) (store.SignalEndpoint, error) {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return store.SignalEndpoint{}, err
	}
	if err := in.validate(); err != nil {
		return store.SignalEndpoint{}, err
	}
	e := store.SignalEndpoint{Name: *in.Name, Description: in.Description, Enabled: in.Enabled == nil || *in.Enabled,
		CreatedAt: tx.Now(), CreatedByUserID: p.Actor().UserID}
	if err := tx.LockForLimit(store.LimitKeySignalEndpoints); err != nil {
		return e, err
	}
	n, err := tx.CountSignalEndpoints()
	if err != nil {
		return e, err
	}
	if n >= limit {
		return e, exceedsLimit("signal endpoint", limit)
	}
	if e.ID, err = tx.InsertSignalEndpoint(e); err != nil {
		return e, err
	}
	if err := tx.Event(store.NewEvent{Type: EventSignalEndpointCreated, Actor: p.Actor(), Data: signalEndpointEventData(e)}); err != nil {
		return e, err
	}
	return tx.SignalEndpoint(e.ID)
}

// UpdateSignalEndpoint renames and describes a signal endpoint (and
// enables or disables it when in says so) as p (ADMIN), with its event.
func UpdateSignalEndpoint(tx *store.Tx, p *Principal, id int64, in SignalEndpointInput) (store.SignalEndpoint, error) {
	if err := in.validate(); err != nil {
		return store.SignalEndpoint{}, err
	}
	return changeSignalEndpoint(tx, p, id, func(e *store.SignalEndpoint) {
		e.Name, e.Description = *in.Name, in.Description
		if in.Enabled != nil {
			e.Enabled = *in.Enabled
		}
	})
}

// SetSignalEndpointEnabled enables or disables a signal endpoint as p
// (ADMIN), with its event; a disabled endpoint accepts no signals.
func SetSignalEndpointEnabled(tx *store.Tx, p *Principal, id int64, enabled bool) (store.SignalEndpoint, error) {
	return changeSignalEndpoint(tx, p, id, func(e *store.SignalEndpoint) { e.Enabled = enabled })
}

// changeSignalEndpoint applies change to an endpoint with its event and
// returns the endpoint as stored.
func changeSignalEndpoint(tx *store.Tx, p *Principal, id int64, change func(*store.SignalEndpoint)) (store.SignalEndpoint, error) {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return store.SignalEndpoint{}, err
	}
	old, err := tx.SignalEndpoint(id)
	if err != nil {
		return old, err
	}
	e := old
	change(&e)
	if err := tx.UpdateSignalEndpoint(e); err != nil {
		return e, err
	}
	if err := tx.Event(store.NewEvent{Type: EventSignalEndpointUpdated, Actor: p.Actor(), Data: signalEndpointEventData(e), PreData: signalEndpointEventData(old)}); err != nil {
		return e, err
	}
	return tx.SignalEndpoint(id)
}

// DeleteSignalEndpoint deletes a signal endpoint with its tokens as p
// (ADMIN), with its event. An endpoint that action sets listen to cannot
// be deleted (409 naming them).
func DeleteSignalEndpoint(tx *store.Tx, p *Principal, id int64) error {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return err
	}
	e, err := tx.SignalEndpoint(id)
	if err != nil {
		return err
	}
	users, err := tx.ActionSetNamesForSource(id)
	if err != nil {
		return err
	}
	if len(users) > 0 {
		return &apierr.Error{Kind: apierr.KindConflict, Name: "ConflictError",
			Message: "Signal endpoint " + e.Name + " is used by the action sets " + strings.Join(users, ", ") + "; delete them or change their source first."}
	}
	if err := tx.DeleteSignalEndpoint(id); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: EventSignalEndpointDeleted, Actor: p.Actor(), PreData: signalEndpointEventData(e)})
}

// SignalTokenInput creates or renames a signal endpoint token.
type SignalTokenInput struct {
	Name *string `json:"name"`
}

// name validates the token name and returns it without surrounding spaces.
func (in SignalTokenInput) name() (string, error) {
	if in.Name == nil || strings.TrimSpace(*in.Name) == "" {
		return "", apierr.Validation("The `name` property is required and must not be empty.")
	}
	if len(*in.Name) > 200 {
		return "", apierr.Validation("The `name` property must be at most 200 characters long.")
	}
	return strings.TrimSpace(*in.Name), nil
}

// CreatedSignalToken is a new signal endpoint token with its secret, shown
// only at creation.
type CreatedSignalToken struct {
	store.SignalEndpointToken
	Token string `json:"token"`
}

// CreateSignalToken creates a token for signal endpoint endpointID as p
// (ADMIN), at most limit per endpoint, with its event. The secret is 28
// random bytes in hex, like the reference's API secrets.
func CreateSignalToken(tx *store.Tx, p *Principal, endpointID int64, limit int, in SignalTokenInput) (CreatedSignalToken, error) {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return CreatedSignalToken{}, err
	}
	name, err := in.name()
	if err != nil {
		return CreatedSignalToken{}, err
	}
	t := store.SignalEndpointToken{Name: name, SignalEndpointID: endpointID, CreatedAt: tx.Now(), CreatedByUserID: p.Actor().UserID}
	secret := RandomHex(28)
	if err := tx.LockForLimit(store.LimitKeySignalTokens); err != nil {
		return CreatedSignalToken{}, err
	}
	if _, err := tx.SignalEndpoint(endpointID); err != nil {
		return CreatedSignalToken{}, err
	}
	n, err := tx.CountSignalEndpointTokens(endpointID)
	if err != nil {
		return CreatedSignalToken{}, err
	}
	if n >= limit {
		return CreatedSignalToken{}, exceedsLimit("signal endpoint token", limit)
	}
	if t.ID, err = tx.InsertSignalEndpointToken(t, secret); err != nil {
		return CreatedSignalToken{}, err
	}
	return CreatedSignalToken{t, secret}, tx.Event(store.NewEvent{Type: EventSignalTokenCreated, Actor: p.Actor(), Data: t})
}

// RenameSignalToken renames a signal endpoint token as p (ADMIN), with its
// event.
func RenameSignalToken(tx *store.Tx, p *Principal, endpointID, tokenID int64, in SignalTokenInput) (store.SignalEndpointToken, error) {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return store.SignalEndpointToken{}, err
	}
	name, err := in.name()
	if err != nil {
		return store.SignalEndpointToken{}, err
	}
	old, err := tx.SignalEndpointToken(endpointID, tokenID)
	if err != nil {
		return old, err
	}
	renamed := old
	renamed.Name = name
	if err := tx.RenameSignalEndpointToken(endpointID, tokenID, renamed.Name); err != nil {
		return renamed, err
	}
	return renamed, tx.Event(store.NewEvent{Type: EventSignalTokenUpdated, Actor: p.Actor(), Data: renamed, PreData: old})
}

// DeleteSignalToken deletes a signal endpoint token as p (ADMIN), with its
// event.
func DeleteSignalToken(tx *store.Tx, p *Principal, endpointID, tokenID int64) error {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return err
	}
	old, err := tx.SignalEndpointToken(endpointID, tokenID)
	if err != nil {
		return err
	}
	if err := tx.DeleteSignalEndpointToken(endpointID, tokenID); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: EventSignalTokenDeleted, Actor: p.Actor(), PreData: old})
}
