package signals

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// Ingest answers POST /api/signal-endpoint/{name}. The checks run in this
// order: unknown or disabled endpoint 404, missing or wrong token 401,
// body over the limit 413, body not JSON 400, over the rate 429; then the
// signal is stored and this instance's worker woken.
func (s *Service) Ingest(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	q := s.store.Q(ctx)
	e, err := q.SignalEndpointByName(r.PathValue("name"))
	if apierr.IsKind(err, apierr.KindNotFound) || (err == nil && !e.Enabled) {
		return apierr.NotFound("There is no enabled signal endpoint named %q.", r.PathValue("name"))
	}
	if err != nil {
		return err
	}
	token, err := s.authenticate(q, e, r.Header.Get("Authorization"))
	if err != nil {
		return err
	}
	payload, err := signalPayload(r, s.cfg.PayloadLimit)
	if err != nil {
		return err
	}
	if err := s.takeRate(q, e.ID); err != nil {
		return err
	}
	sg, err := q.InsertSignal(store.Signal{Source: store.SignalSourceEndpoint, SourceID: e.ID, TokenID: &token.ID,
		TokenName: &token.Name, Payload: payload, CreatedAt: store.FromMillis(store.Millis(s.store.Now()))})
	if err != nil {
		return err
	}
	s.notify()
	return httpjson.Write(w, http.StatusOK, map[string]any{"signals": []store.Signal{sg}})
}

// authenticate finds the endpoint's token whose secret is in the
// Authorization header ("Bearer <token>" or the bare token).
func (s *Service) authenticate(q store.Q, e store.SignalEndpoint, header string) (store.SignalEndpointToken, error) {
	secret := strings.TrimSpace(header)
	if len(secret) > 6 && strings.EqualFold(secret[:6], "bearer") && (secret[6] == ' ' || secret[6] == '\t') {
		secret = strings.TrimSpace(secret[6:])
	}
	if secret == "" {
		return store.SignalEndpointToken{}, apierr.Unauthenticated("A signal endpoint token is required: send it as Authorization: Bearer <token>.")
	}
	t, err := q.SignalEndpointTokenByHash(e.ID, store.HashSecret(secret))
	if apierr.IsKind(err, apierr.KindNotFound) {
		return t, apierr.Unauthenticated("The token is not a token of signal endpoint %s.", e.Name)
	}
	return t, err
}

// signalPayload reads the optional JSON body; an empty body is {}.
func signalPayload(r *http.Request, limit int64) (json.RawMessage, error) {
	body, err := httpjson.ReadBody(r, limit)
	if err != nil {
		return nil, err
	}
	body = bytes.TrimSpace(body)
	if len(body) == 0 {
		return json.RawMessage(`{}`), nil
	}
	if !json.Valid(body) {
		return nil, apierr.Validation("The signal body must be JSON (or empty).")
	}
	if err := httpjson.CheckText(body); err != nil {
		return nil, err
	}
	return json.RawMessage(body), nil
}

// takeRate counts the request in the endpoint's current one-second window,
// in the database so that every instance shares the count.
func (s *Service) takeRate(q store.Q, endpointID int64) error {
	now := s.store.Now()
	window := now.Truncate(time.Second)
	hits, err := q.HitSignalRate(endpointID, store.Millis(window))
	if err != nil {
		return err
	}
	if hits > int64(s.cfg.RatePerSecond) {
		return apierr.RateLimited(1, "Too many signals: signal endpoints accept %d per second. Retry after a second.", s.cfg.RatePerSecond)
	}
	return nil
}

// ListEndpointSignals answers GET /api/admin/signal-endpoints/{id}/signals,
// newest first.
func (s *Service) ListEndpointSignals(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	limit, offset, err := paging(r, 50, 1000)
	if err != nil {
		return err
	}
	q := s.store.Q(r.Context())
	if _, err := q.SignalEndpoint(id); err != nil {
		return err
	}
	list, _, err := q.Signals(store.SignalFilter{SourceID: id, Limit: limit, Offset: offset})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"signalEndpointSignals": list})
}

// ListSignals answers GET /api/admin/signals: every endpoint's signals,
// newest first, optionally between from and to (IS:yyyy-MM-dd, both days
// included), with the total.
func (s *Service) ListSignals(w http.ResponseWriter, r *http.Request) error {
	limit, offset, err := paging(r, 50, 1000)
	if err != nil {
		return err
	}
	f := store.SignalFilter{Limit: limit, Offset: offset}
	if f.From, err = dayParam(r, "from", 0); err != nil {
		return err
	}
	if f.To, err = dayParam(r, "to", 1); err != nil {
		return err
	}
	list, total, err := s.store.Q(r.Context()).Signals(f)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"signals": list, "total": total})
}

// dayParam parses a date query parameter (optionally prefixed "IS:") as the
// start of that UTC day plus addDays.
func dayParam(r *http.Request, name string, addDays int) (*time.Time, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return nil, nil
	}
	d, err := time.Parse(time.DateOnly, strings.TrimPrefix(v, "IS:"))
	if err != nil {
		return nil, apierr.Validation("The `%s` query parameter must be a date like IS:2024-01-31; you sent %q.", name, v)
	}
	d = d.AddDate(0, 0, addDays)
	return &d, nil
}
