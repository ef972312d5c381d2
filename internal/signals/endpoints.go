package signals

import (
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// Event types written by the endpoint and token handlers.
const (
	EventEndpointCreated = "signal-endpoint-created"
	EventEndpointUpdated = "signal-endpoint-updated"
	EventEndpointDeleted = "signal-endpoint-deleted"
	EventTokenCreated    = "signal-endpoint-token-created"
	EventTokenUpdated    = "signal-endpoint-token-updated"
	EventTokenDeleted    = "signal-endpoint-token-deleted"
)

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

// endpointBody is the create/update request.
type endpointBody struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Enabled     *bool   `json:"enabled"`
}

func (b endpointBody) validate() error {
	if b.Name == nil {
		return apierr.Validation("The `name` property is required.")
	}
	if !urlSafeName(*b.Name) {
		return apierr.Validation("The `name` property must be URL-safe: 1 to 100 letters, digits, '.', '_', '~' or '-'; you sent %q.", *b.Name)
	}
	return nil
}

// endpointView is an endpoint as the API shows it; url only on create/update.
type endpointView struct {
	store.SignalEndpoint
	URL string `json:"url,omitempty"`
}

func (s *Service) endpointURL(name string) string {
	return strings.TrimRight(s.baseURL, "/") + "/api/signal-endpoint/" + name
}

// endpointEventData is what endpoint events record (tokens omitted).
func endpointEventData(e store.SignalEndpoint) map[string]any {
	return map[string]any{"id": e.ID, "name": e.Name, "description": e.Description, "enabled": e.Enabled}
}

// ListEndpoints answers GET /api/admin/signal-endpoints.
func (s *Service) ListEndpoints(w http.ResponseWriter, r *http.Request) error {
	list, err := s.store.Q(r.Context()).SignalEndpoints()
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"signalEndpoints": list})
}

// CreateEndpoint answers POST /api/admin/signal-endpoints.
func (s *Service) CreateEndpoint(w http.ResponseWriter, r *http.Request) error {
	var body endpointBody
	if err := decodeValid(r, &body); err != nil {
		return err
	}
	actor := actorOf(r)
	e := store.SignalEndpoint{Name: *body.Name, Description: body.Description, Enabled: body.Enabled == nil || *body.Enabled,
		CreatedAt: s.store.Now(), CreatedByUserID: actor.UserID}
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if err := tx.LockForLimit(store.LimitKeySignalEndpoints); err != nil {
			return err
		}
		n, err := tx.CountSignalEndpoints()
		if err != nil {
			return err
		}
		if n >= s.cfg.EndpointsLimit {
			return exceedsLimit("signal endpoint", s.cfg.EndpointsLimit)
		}
		if e.ID, err = tx.InsertSignalEndpoint(e); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: EventEndpointCreated, Actor: actor, Data: endpointEventData(e)})
	})
	if err != nil {
		return err
	}
	created, err := s.store.Q(r.Context()).SignalEndpoint(e.ID)
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "api/admin/signal-endpoints/%s", strconv.FormatInt(e.ID, 10))
	return httpjson.Write(w, http.StatusCreated, endpointView{created, s.endpointURL(created.Name)})
}

// UpdateEndpoint answers PUT /api/admin/signal-endpoints/{id}.
func (s *Service) UpdateEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var body endpointBody
	if err := decodeValid(r, &body); err != nil {
		return err
	}
	return s.changeEndpoint(w, r, id, func(e *store.SignalEndpoint) {
		e.Name, e.Description = *body.Name, body.Description
		if body.Enabled != nil {
			e.Enabled = *body.Enabled
		}
	})
}

// EnableEndpoint answers POST /api/admin/signal-endpoints/{id}/on.
func (s *Service) EnableEndpoint(w http.ResponseWriter, r *http.Request) error {
	return s.setEndpointEnabled(w, r, true)
}

// DisableEndpoint answers POST /api/admin/signal-endpoints/{id}/off.
func (s *Service) DisableEndpoint(w http.ResponseWriter, r *http.Request) error {
	return s.setEndpointEnabled(w, r, false)
}

func (s *Service) setEndpointEnabled(w http.ResponseWriter, r *http.Request, enabled bool) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return s.changeEndpoint(w, r, id, func(e *store.SignalEndpoint) { e.Enabled = enabled })
}

// changeEndpoint applies change to an endpoint in one transaction with its
// event, then answers the endpoint with its URL.
func (s *Service) changeEndpoint(w http.ResponseWriter, r *http.Request, id int64, change func(*store.SignalEndpoint)) error {
	actor := actorOf(r)
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.SignalEndpoint(id)
		if err != nil {
			return err
		}
		e := old
		change(&e)
		if err := tx.UpdateSignalEndpoint(e); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: EventEndpointUpdated, Actor: actor, Data: endpointEventData(e), PreData: endpointEventData(old)})
	})
	if err != nil {
		return err
	}
	e, err := s.store.Q(r.Context()).SignalEndpoint(id)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, endpointView{e, s.endpointURL(e.Name)})
}

// DeleteEndpoint answers DELETE /api/admin/signal-endpoints/{id}. An
// endpoint that action sets listen to cannot be deleted (409 naming them).
func (s *Service) DeleteEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	actor := actorOf(r)
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
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
		return tx.Event(store.NewEvent{Type: EventEndpointDeleted, Actor: actor, PreData: endpointEventData(e)})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// tokenBody is the create/rename request of a token.
type tokenBody struct {
	Name *string `json:"name"`
}

func (b tokenBody) validate() error {
	if b.Name == nil || strings.TrimSpace(*b.Name) == "" {
		return apierr.Validation("The `name` property is required and must not be empty.")
	}
	if len(*b.Name) > 200 {
		return apierr.Validation("The `name` property must be at most 200 characters long.")
	}
	return nil
}

// createdToken is a token with its secret, shown only at creation.
type createdToken struct {
	store.SignalEndpointToken
	Token string `json:"token"`
}

// ListTokens answers GET /api/admin/signal-endpoints/{id}/tokens.
func (s *Service) ListTokens(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	e, err := s.store.Q(r.Context()).SignalEndpoint(id)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"signalEndpointTokens": e.Tokens})
}

// CreateToken answers POST /api/admin/signal-endpoints/{id}/tokens; the
// response is the only place the secret ever appears.
func (s *Service) CreateToken(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var body tokenBody
	if err := decodeValid(r, &body); err != nil {
		return err
	}
	actor := actorOf(r)
	secret := newTokenSecret()
	t := store.SignalEndpointToken{Name: strings.TrimSpace(*body.Name), SignalEndpointID: id, CreatedAt: s.store.Now(), CreatedByUserID: actor.UserID}
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if err := tx.LockForLimit(store.LimitKeySignalTokens); err != nil {
			return err
		}
		if _, err := tx.SignalEndpoint(id); err != nil {
			return err
		}
		n, err := tx.CountSignalEndpointTokens(id)
		if err != nil {
			return err
		}
		if n >= s.cfg.TokensPerEndpointLimit {
			return exceedsLimit("signal endpoint token", s.cfg.TokensPerEndpointLimit)
		}
		if t.ID, err = tx.InsertSignalEndpointToken(t, secret); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: EventTokenCreated, Actor: actor, Data: t})
	})
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "api/admin/signal-endpoints/%s/tokens/%s", strconv.FormatInt(id, 10), strconv.FormatInt(t.ID, 10))
	return httpjson.Write(w, http.StatusCreated, createdToken{t, secret})
}

// newTokenSecret is 28 random bytes in hex, like the reference's API secrets.
func newTokenSecret() string {
	var b [28]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// RenameToken answers PUT /api/admin/signal-endpoints/{id}/tokens/{tokenId}.
func (s *Service) RenameToken(w http.ResponseWriter, r *http.Request) error {
	id, tokenID, err := tokenPath(r)
	if err != nil {
		return err
	}
	var body tokenBody
	if err := decodeValid(r, &body); err != nil {
		return err
	}
	actor := actorOf(r)
	var renamed store.SignalEndpointToken
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.SignalEndpointToken(id, tokenID)
		if err != nil {
			return err
		}
		renamed = old
		renamed.Name = strings.TrimSpace(*body.Name)
		if err := tx.RenameSignalEndpointToken(id, tokenID, renamed.Name); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: EventTokenUpdated, Actor: actor, Data: renamed, PreData: old})
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, renamed)
}

// DeleteToken answers DELETE /api/admin/signal-endpoints/{id}/tokens/{tokenId}.
func (s *Service) DeleteToken(w http.ResponseWriter, r *http.Request) error {
	id, tokenID, err := tokenPath(r)
	if err != nil {
		return err
	}
	actor := actorOf(r)
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.SignalEndpointToken(id, tokenID)
		if err != nil {
			return err
		}
		if err := tx.DeleteSignalEndpointToken(id, tokenID); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: EventTokenDeleted, Actor: actor, PreData: old})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func tokenPath(r *http.Request) (id, tokenID int64, err error) {
	if id, err = pathID(r, "id"); err != nil {
		return 0, 0, err
	}
	tokenID, err = pathID(r, "tokenId")
	return id, tokenID, err
}
