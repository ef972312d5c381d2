package integrations

import (
	"context"
	"encoding/json"
	"strconv"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// IntegrationEvent is one attempt of the delivery log as the API answers
// it (Unleash's integrationEventSchema). Details holds deliveryId (the
// webhook-id, the same on every attempt of a delivery), attempt, target
// (scheme and host only), statusCode, answer (the start of the receiver's
// body), error, durationMs, and retry with nextAttemptAt.
type IntegrationEvent struct {
	ID            string         `json:"id"`
	IntegrationID int64          `json:"integrationId"`
	CreatedAt     time.Time      `json:"createdAt"`
	State         string         `json:"state"`
	StateDetails  string         `json:"stateDetails"`
	Event         store.Event    `json:"event"`
	Details       map[string]any `json:"details"`
}

func integrationEvent(a store.DeliveryAttempt) IntegrationEvent {
	out := IntegrationEvent{ID: strconv.FormatInt(a.ID, 10), IntegrationID: a.IntegrationID, CreatedAt: a.CreatedAt,
		State: a.State, StateDetails: a.StateDetails, Details: map[string]any{}}
	_ = json.Unmarshal(a.Event, &out.Event)
	_ = json.Unmarshal(a.Details, &out.Details)
	return out
}

// Log answers integration id's delivery log, newest first, as p (ADMIN).
func (s *Service) Log(ctx context.Context, p *domain.Principal, id int64, limit, offset int) ([]IntegrationEvent, error) {
	if err := p.Require(domain.PermUpdateAddon, "", ""); err != nil {
		return nil, err
	}
	q := s.store.Q(ctx)
	if _, err := q.Integration(id); err != nil {
		return nil, err
	}
	rows, err := q.DeliveryAttempts(id, limit, offset)
	if err != nil {
		return nil, err
	}
	out := make([]IntegrationEvent, len(rows))
	for i, a := range rows {
		out[i] = integrationEvent(a)
	}
	return out, nil
}

// TestEventType is the type of the event a test send delivers; no change
// writes it.
const TestEventType = "integration-test"

// Test sends a test event to integration id now, as p (ADMIN), whether
// or not it is enabled and whatever its filters, records the attempt in
// the delivery log and answers it. It is not retried.
func (s *Service) Test(ctx context.Context, p *domain.Principal, id int64) (IntegrationEvent, error) {
	if err := p.Require(domain.PermUpdateAddon, "", ""); err != nil {
		return IntegrationEvent{}, err
	}
	q := s.store.Q(ctx)
	in, err := q.Integration(id)
	if err != nil {
		return IntegrationEvent{}, err
	}
	secrets, err := s.secrets.open(ctx, in.Secrets)
	if err != nil {
		return IntegrationEvent{}, apierr.Unavailable("The stored secrets of addon %d cannot be read: %s", id, err.Error())
	}
	now := s.store.Now()
	project, env, flag := "default", "development", "bunting-test-flag"
	data, _ := json.Marshal(map[string]any{"message": "A test event sent from Bunting to check this integration.", "name": flag})
	ev := store.Event{ID: 0, Type: TestEventType, CreatedBy: p.Name, CreatedByUserID: p.UserID, CreatedAt: store.FromMillis(store.Millis(now)),
		Data: data, Tags: json.RawMessage("[]"), FeatureName: &flag, Project: &project, Environment: &env}
	deliveryID := "msg_test_" + domain.RandomHex(8)
	res := s.send(ctx, in.Provider, merge(in.Parameters, secrets), ev, deliveryID)
	details := res.details(deliveryID, 1)
	details["test"] = true
	a := store.DeliveryAttempt{IntegrationID: id, DeliveryID: deliveryID, Attempt: 1, CreatedAt: now}
	a.Event, _ = json.Marshal(ev)
	if res.ok() {
		a.State, a.StateDetails = StateSuccess, "Test event: "+res.describe()
	} else {
		a.State, a.StateDetails = StateFailed, "Test event: "+res.describe()
	}
	a.Details, _ = json.Marshal(details)
	err = s.store.Record(ctx, func(tx *store.Tx) error { return tx.InsertDeliveryAttempt(a) })
	if err != nil {
		return IntegrationEvent{}, err
	}
	rows, err := q.DeliveryAttempts(id, 1, 0)
	if err != nil || len(rows) == 0 {
		return integrationEvent(a), err
	}
	return integrationEvent(rows[0]), nil
}
