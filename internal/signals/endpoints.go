package signals

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// endpointView is an endpoint as the API shows it; url only on create/update.
type endpointView struct {
	store.SignalEndpoint
	URL string `json:"url,omitempty"`
}

func (s *Service) endpointURL(name string) string {
	return strings.TrimRight(s.baseURL, "/") + "/api/signal-endpoint/" + name
}

// ListEndpoints answers GET /api/admin/signal-endpoints.
func (s *Service) ListEndpoints(w http.ResponseWriter, r *http.Request) error {
	list, err := s.store.Q(r.Context()).SignalEndpoints()
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"signalEndpoints": list})
}

// CreateEndpoint answers POST /api/admin/signal-endpoints
// (domain.CreateSignalEndpoint).
func (s *Service) CreateEndpoint(w http.ResponseWriter, r *http.Request) error {
	var in domain.SignalEndpointInput
	if err := httpjson.Decode(r, bodyLimit, &in); err != nil {
		return err
	}
	var e store.SignalEndpoint
	err := s.store.Tx(r.Context(), func(tx *store.Tx) (err error) {
		e, err = domain.CreateSignalEndpoint(tx, domain.PrincipalFrom(r.Context()), s.cfg.EndpointsLimit, in)
		return err
	})
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "api/admin/signal-endpoints/%s", strconv.FormatInt(e.ID, 10))
	return httpjson.Write(w, http.StatusCreated, endpointView{e, s.endpointURL(e.Name)})
}

// UpdateEndpoint answers PUT /api/admin/signal-endpoints/{id}
// (domain.UpdateSignalEndpoint).
func (s *Service) UpdateEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var in domain.SignalEndpointInput
	if err := httpjson.Decode(r, bodyLimit, &in); err != nil {
		return err
	}
	return s.changeEndpoint(w, r, func(tx *store.Tx, p *domain.Principal) (store.SignalEndpoint, error) {
		return domain.UpdateSignalEndpoint(tx, p, id, in)
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
	return s.changeEndpoint(w, r, func(tx *store.Tx, p *domain.Principal) (store.SignalEndpoint, error) {
		return domain.SetSignalEndpointEnabled(tx, p, id, enabled)
	})
}

// changeEndpoint runs change in a transaction as the caller and answers
// the endpoint with its URL.
func (s *Service) changeEndpoint(w http.ResponseWriter, r *http.Request, change func(*store.Tx, *domain.Principal) (store.SignalEndpoint, error)) error {
	var e store.SignalEndpoint
	err := s.store.Tx(r.Context(), func(tx *store.Tx) (err error) {
		e, err = change(tx, domain.PrincipalFrom(r.Context()))
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, endpointView{e, s.endpointURL(e.Name)})
}

// DeleteEndpoint answers DELETE /api/admin/signal-endpoints/{id}
// (domain.DeleteSignalEndpoint: 409 while action sets listen to it).
func (s *Service) DeleteEndpoint(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return s.answerOK(w, r, func(tx *store.Tx, p *domain.Principal) error { return domain.DeleteSignalEndpoint(tx, p, id) })
}

// answerOK runs op in a transaction as the caller and answers 200 with an
// empty body.
func (s *Service) answerOK(w http.ResponseWriter, r *http.Request, op func(*store.Tx, *domain.Principal) error) error {
	if err := s.store.Tx(r.Context(), func(tx *store.Tx) error { return op(tx, domain.PrincipalFrom(r.Context())) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
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

// CreateToken answers POST /api/admin/signal-endpoints/{id}/tokens
// (domain.CreateSignalToken); the response is the only place the secret
// ever appears.
func (s *Service) CreateToken(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var in domain.SignalTokenInput
	if err := httpjson.Decode(r, bodyLimit, &in); err != nil {
		return err
	}
	var t domain.CreatedSignalToken
	err = s.store.Tx(r.Context(), func(tx *store.Tx) (err error) {
		t, err = domain.CreateSignalToken(tx, domain.PrincipalFrom(r.Context()), id, s.cfg.TokensPerEndpointLimit, in)
		return err
	})
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "api/admin/signal-endpoints/%s/tokens/%s", strconv.FormatInt(id, 10), strconv.FormatInt(t.ID, 10))
	return httpjson.Write(w, http.StatusCreated, t)
}

// RenameToken answers PUT /api/admin/signal-endpoints/{id}/tokens/{tokenId}
// (domain.RenameSignalToken).
func (s *Service) RenameToken(w http.ResponseWriter, r *http.Request) error {
	id, tokenID, err := tokenPath(r)
	if err != nil {
		return err
	}
	var in domain.SignalTokenInput
	if err := httpjson.Decode(r, bodyLimit, &in); err != nil {
		return err
	}
	var renamed store.SignalEndpointToken
	err = s.store.Tx(r.Context(), func(tx *store.Tx) (err error) {
		renamed, err = domain.RenameSignalToken(tx, domain.PrincipalFrom(r.Context()), id, tokenID, in)
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, renamed)
}

// DeleteToken answers DELETE /api/admin/signal-endpoints/{id}/tokens/{tokenId}
// (domain.DeleteSignalToken).
func (s *Service) DeleteToken(w http.ResponseWriter, r *http.Request) error {
	id, tokenID, err := tokenPath(r)
	if err != nil {
		return err
	}
	return s.answerOK(w, r, func(tx *store.Tx, p *domain.Principal) error { return domain.DeleteSignalToken(tx, p, id, tokenID) })
}

func tokenPath(r *http.Request) (id, tokenID int64, err error) {
	if id, err = pathID(r, "id"); err != nil {
		return 0, 0, err
	}
	tokenID, err = pathID(r, "tokenId")
	return id, tokenID, err
}
