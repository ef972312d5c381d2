package changerequests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// Limits.
const (
	maxChangesPerRequest = 500
	maxTitle             = 255
	maxComment           = 5000
	maxApprovals         = 10
)

// ConfigInput is the body of PUT …/environments/{environment}/change-requests/config.
type ConfigInput struct {
	ChangeRequestsEnabled *bool `json:"changeRequestsEnabled"`
	// RequiredApprovals is 1–10 (1 when left out).
	RequiredApprovals *int32 `json:"requiredApprovals,omitempty"`
}

// EnvironmentConfig is one environment's setting, as GET
// …/change-requests/config lists them (changeRequestEnvironmentConfigSchema).
type EnvironmentConfig struct {
	Environment          string `json:"environment"`
	Type                 string `json:"type"`
	ChangeRequestEnabled bool   `json:"changeRequestEnabled"`
	RequiredApprovals    int    `json:"requiredApprovals"`
}

// ChangeInput is one change as POST …/change-requests and PUT
// …/changes/{changeId} take it: the flag (null for a segment's change),
// the action and its payload, as the matching admin route takes it.
type ChangeInput struct {
	Feature *string         `json:"feature"`
	Action  string          `json:"action"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

// ChangeInputs is one change or a list of them.
type ChangeInputs []ChangeInput

// UnmarshalJSON reads an object (one change) or an array.
func (c *ChangeInputs) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if len(data) > 0 && data[0] == '{' {
		var one ChangeInput
		if err := json.Unmarshal(data, &one); err != nil {
			return err
		}
		*c = ChangeInputs{one}
		return nil
	}
	var many []ChangeInput
	if err := json.Unmarshal(data, &many); err != nil {
		return err
	}
	*c = many
	return nil
}

// StateInput is the body of PUT …/change-requests/{id}/state.
type StateInput struct {
	State   string `json:"state"`
	Comment string `json:"comment,omitempty"`
	// ScheduledAt (RFC 3339) is when a Scheduled request applies itself.
	ScheduledAt *string `json:"scheduledAt,omitempty"`
}

// TitleInput is the body of PUT …/change-requests/{id}/title.
type TitleInput struct {
	Title string `json:"title"`
}

// CommentInput is the body of POST …/change-requests/{id}/comments.
type CommentInput struct {
	Text string `json:"text"`
}

// Settings lists every environment of project with its change request
// setting.
func (s *Service) Settings(ctx context.Context, project string) ([]EnvironmentConfig, error) {
	q := s.store.Q(ctx)
	if _, err := q.Project(project); err != nil {
		return nil, err
	}
	names, err := q.ProjectEnvironments(project)
	if err != nil {
		return nil, err
	}
	envs, err := q.Environments()
	if err != nil {
		return nil, err
	}
	settings, err := q.ChangeRequestSettings(project)
	if err != nil {
		return nil, err
	}
	out := []EnvironmentConfig{}
	for _, e := range envs {
		if !slices.Contains(names, e.Name) {
			continue
		}
		c := EnvironmentConfig{Environment: e.Name, Type: e.Type, RequiredApprovals: 1}
		for _, st := range settings {
			if st.Environment == e.Name {
				c.ChangeRequestEnabled, c.RequiredApprovals = st.Enabled, st.RequiredApprovals
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// Configure turns change requests on or off in a project environment as
// p (UPDATE_PROJECT), with a change-request-configuration-updated event.
func (s *Service) Configure(ctx context.Context, p *domain.Principal, project, env string, in ConfigInput) error {
	if err := p.Require(domain.PermUpdateProject, project, ""); err != nil {
		return err
	}
	if in.ChangeRequestsEnabled == nil {
		return apierr.Validation("The `changeRequestsEnabled` property is required: true to require change requests in this environment, false to allow direct changes.")
	}
	// No count, or 0 (what Unleash's Terraform provider sends when its
	// configuration leaves the count out), keeps the environment's count.
	approvals := 0
	if in.RequiredApprovals != nil {
		approvals = int(*in.RequiredApprovals)
	}
	if approvals < 0 || approvals > maxApprovals {
		return apierr.Validation("The `requiredApprovals` property must be between 1 and %d; you sent %d.", maxApprovals, approvals)
	}
	return s.store.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.Project(project); err != nil {
			return err
		}
		envs, err := tx.ProjectEnvironments(project)
		if err != nil {
			return err
		}
		if !slices.Contains(envs, env) {
			return apierr.NotFound("Environment %s is not enabled in project %s.", env, project)
		}
		old, err := tx.ChangeRequestSetting(project, env)
		if err != nil {
			return err
		}
		if approvals == 0 {
			approvals = max(old.RequiredApprovals, 1)
		}
		next := store.ChangeRequestSetting{Project: project, Environment: env, Enabled: *in.ChangeRequestsEnabled, RequiredApprovals: approvals}
		if err := tx.SetChangeRequestSetting(next); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "change-request-configuration-updated", Actor: p.Actor(), Project: project, Environment: env,
			Data: settingData(next), PreData: settingData(old)})
	})
}

func settingData(st store.ChangeRequestSetting) map[string]any {
	return map[string]any{"changeRequestsEnabled": st.Enabled, "requiredApprovals": st.RequiredApprovals}
}

// errDryRun rolls back a transaction that only checked changes.
var errDryRun = errors.New("changerequests: dry run")

// dryRunID marks the principal of a dry run as applying a request, so the
// gate lets the checked changes through.
const dryRunID = math.MaxInt64

// check runs changes as p in a transaction that is rolled back: a change
// is validated with the very operation that will apply it, and p must
// hold the permissions that operation needs (a Viewer cannot draft).
func (s *Service) check(ctx context.Context, p *domain.Principal, cr store.ChangeRequest, changes []store.ChangeRequestChange) error {
	dry := *p
	dry.ChangeRequest = dryRunID
	err := s.store.Tx(ctx, func(tx *store.Tx) error {
		for i, c := range changes {
			if err := actions[c.Action].run(tx, &dry, cr, c); err != nil {
				return describeError(err, i, len(changes), c)
			}
		}
		return errDryRun
	})
	if errors.Is(err, errDryRun) {
		return nil
	}
	return err
}

// describeError prefixes an operation's error with the change it came
// from (when there are several), keeping its kind.
func describeError(err error, i, n int, c store.ChangeRequestChange) error {
	var e *apierr.Error
	if !errors.As(err, &e) || n < 2 {
		return err
	}
	what := c.Feature
	if what == "" {
		what = fmt.Sprintf("segment %d", c.SegmentID)
	}
	out := *e
	out.Message = fmt.Sprintf("Change %d (%s of %s): %s", i+1, c.Action, what, e.Message)
	return &out
}

// toChange validates one input's shape and makes it a change of cr.
func toChange(q store.Q, p *domain.Principal, cr store.ChangeRequest, in ChangeInput, i int) (store.ChangeRequestChange, error) {
	at := "change"
	if i >= 0 {
		at = fmt.Sprintf("[%d]", i)
	}
	a, ok := actions[in.Action]
	if !ok {
		return store.ChangeRequestChange{}, apierr.Validation("The `%s.action` property must be one of %s; you sent %q.", at, actionNames(), in.Action)
	}
	c := store.ChangeRequestChange{ChangeRequestID: cr.ID, Action: in.Action, Payload: in.Payload, CreatedBy: p.Name, CreatedByUserID: p.UserID}
	if len(c.Payload) == 0 {
		c.Payload = json.RawMessage("null")
	}
	if a.segment {
		id, err := payloadSegmentID(in.Payload)
		if err != nil {
			return c, err
		}
		c.SegmentID = id
		if _, err := q.Segment(id); err != nil {
			return c, err
		}
		return c, nil
	}
	if in.Feature == nil || *in.Feature == "" {
		return c, apierr.Validation("The `%s.feature` property is required for the %s action: the flag the change applies to.", at, in.Action)
	}
	c.Feature = *in.Feature
	if _, err := q.FeatureInProject(cr.Project, c.Feature); err != nil {
		return c, err
	}
	return c, nil
}

// recordVersion records the version of what c changes, as q sees it now.
func recordVersion(q store.Q, cr store.ChangeRequest, c *store.ChangeRequestChange) error {
	a := actions[c.Action]
	if a.version == nil {
		c.Version = ""
		return nil
	}
	v, err := a.version(q, cr, *c)
	c.Version = v
	return err
}

// AddChanges adds changes to p's draft in a project environment (making
// one when p has none), after checking each with the operation that will
// apply it, and returns the draft.
func (s *Service) AddChanges(ctx context.Context, p *domain.Principal, project, env string, in ChangeInputs) (View, error) {
	if p == nil {
		return View{}, apierr.Unauthenticated("You must log in to use Bunting.")
	}
	if len(in) == 0 {
		return View{}, apierr.Validation("The request body must be a change or a list of changes.")
	}
	q := s.store.Q(ctx)
	setting, err := q.ChangeRequestSetting(project, env)
	if err != nil {
		return View{}, err
	}
	if !setting.Enabled {
		if _, err := q.Project(project); err != nil {
			return View{}, err
		}
		return View{}, apierr.Validation("Change requests are not enabled for environment %s in project %s: change it directly, or turn them on first.", env, project)
	}
	draft := store.ChangeRequest{Project: project, Environment: env}
	var changes []store.ChangeRequestChange
	for i, c := range in {
		idx := i
		if len(in) == 1 {
			idx = -1
		}
		ch, err := toChange(q, p, draft, c, idx)
		if err != nil {
			return View{}, err
		}
		changes = append(changes, ch)
	}
	if err := s.check(ctx, p, draft, changes); err != nil {
		return View{}, err
	}
	var id int64
	// Two additions racing to make the same person's draft: the unique
	// index lets one make it, and the other adds to it on its next try.
	for attempt := 0; ; attempt++ {
		err = s.addToDraft(ctx, p, project, env, setting, changes, &id)
		if err == nil || attempt == 2 || !s.store.IsUniqueViolation(err) {
			break
		}
	}
	if err != nil {
		return View{}, err
	}
	return s.Get(ctx, project, id)
}

// addToDraft adds checked changes to p's draft (made when p has none) in
// one transaction, and sets *id to the draft's id.
func (s *Service) addToDraft(ctx context.Context, p *domain.Principal, project, env string, setting store.ChangeRequestSetting, changes []store.ChangeRequestChange, id *int64) error {
	return s.store.Tx(ctx, func(tx *store.Tx) error {
		key := principalKey(p)
		drafts, err := tx.ChangeRequests(store.ChangeRequestFilter{Project: project, Environment: env, AuthorKey: key, States: []string{store.CRDraft}, Limit: 1})
		if err != nil {
			return err
		}
		var cr store.ChangeRequest
		if len(drafts) > 0 {
			cr = drafts[0]
		} else {
			now := tx.Now()
			cr = store.ChangeRequest{Project: project, Environment: env, State: store.CRDraft, MinApprovals: setting.RequiredApprovals,
				AuthorKey: key, CreatedBy: p.Name, CreatedByUserID: p.UserID, CreatedAt: now, StateTimestamps: map[string]time.Time{store.CRDraft: now}}
			if cr.ID, err = tx.InsertChangeRequest(cr); err != nil {
				return err
			}
			if err := tx.Event(s.event("change-request-created", p, cr, nil)); err != nil {
				return err
			}
		}
		existing, err := tx.ChangeRequestChanges(cr.ID)
		if err != nil {
			return err
		}
		if len(existing)+len(changes) > maxChangesPerRequest {
			return apierr.Validation("A change request holds at most %d changes.", maxChangesPerRequest)
		}
		for _, c := range changes {
			c.ChangeRequestID, c.CreatedAt = cr.ID, tx.Now()
			if err := recordVersion(tx.Q, cr, &c); err != nil {
				return err
			}
			if c.ID, err = tx.InsertChangeRequestChange(c); err != nil {
				return err
			}
			if err := tx.Event(s.changeEvent("change-added", p, cr, c)); err != nil {
				return err
			}
		}
		*id = cr.ID
		return nil
	})
}

// event is a change-request-* event about cr.
func (s *Service) event(typ string, p *domain.Principal, cr store.ChangeRequest, extra map[string]any) store.NewEvent {
	data := map[string]any{"changeRequestId": cr.ID, "state": cr.State}
	if cr.Title != "" {
		data["title"] = cr.Title
	}
	for k, v := range extra {
		data[k] = v
	}
	return store.NewEvent{Type: typ, Actor: p.Actor(), Project: cr.Project, Environment: cr.Environment, Data: data}
}

// changeEvent is a change-* event about one change of cr.
func (s *Service) changeEvent(typ string, p *domain.Principal, cr store.ChangeRequest, c store.ChangeRequestChange) store.NewEvent {
	ev := s.event(typ, p, cr, map[string]any{"changeId": c.ID, "action": c.Action, "payload": c.Payload})
	ev.FeatureName = c.Feature
	if c.SegmentID != 0 {
		ev.Data.(map[string]any)["segmentId"] = c.SegmentID
	}
	return ev
}

// editable loads request id of project for a change to its content by p:
// only its author may, and only while it is open.
func editable(tx *store.Tx, p *domain.Principal, project string, id int64) (store.ChangeRequest, error) {
	cr, err := locked(tx, project, id)
	if err != nil {
		return cr, err
	}
	if principalKey(p) != cr.AuthorKey {
		return cr, apierr.Forbidden("Only the author of change request %d (%s) may change its content.", cr.ID, cr.CreatedBy)
	}
	if !slices.Contains(store.OpenChangeRequestStates, cr.State) {
		return cr, apierr.Validation("Change request %d is %s: its content can no longer change.", cr.ID, cr.State)
	}
	return cr, nil
}

// locked locks and loads request id of project (404 when it is another
// project's).
func locked(tx *store.Tx, project string, id int64) (store.ChangeRequest, error) {
	if err := tx.LockChangeRequest(id); err != nil {
		return store.ChangeRequest{}, err
	}
	cr, err := tx.ChangeRequest(id)
	if err == nil && cr.Project != project {
		return cr, apierr.NotFound("Could not find a change request with id %d in project %s.", id, project)
	}
	return cr, err
}

// backToReview takes a changed request's approvals back: an edited
// request in review, approved or scheduled is reviewed again.
func (s *Service) backToReview(tx *store.Tx, p *domain.Principal, cr *store.ChangeRequest) (int64, error) {
	if cr.State == store.CRDraft {
		return 0, nil
	}
	n, err := tx.DeleteChangeRequestReviews(cr.ID)
	if err != nil {
		return 0, err
	}
	cr.State, cr.ScheduledAt, cr.ScheduleStatus, cr.ScheduleReason, cr.ScheduledBy = store.CRInReview, nil, "", "", ""
	cr.StateTimestamps[store.CRInReview] = tx.Now()
	return n, tx.UpdateChangeRequest(*cr)
}

// EditChange replaces one change of an open request as its author, after
// checking it; a request past Draft goes back to review, its approvals
// taken back.
func (s *Service) EditChange(ctx context.Context, p *domain.Principal, project string, id, changeID int64, in ChangeInput) (View, error) {
	if p == nil {
		return View{}, apierr.Unauthenticated("You must log in to use Bunting.")
	}
	q := s.store.Q(ctx)
	cr, err := q.ChangeRequest(id)
	if err != nil {
		return View{}, err
	}
	c, err := toChange(q, p, cr, in, -1)
	if err != nil {
		return View{}, err
	}
	if err := s.check(ctx, p, cr, []store.ChangeRequestChange{c}); err != nil {
		return View{}, err
	}
	err = s.store.Tx(ctx, func(tx *store.Tx) error {
		cr, err := editable(tx, p, project, id)
		if err != nil {
			return err
		}
		old, err := changeOf(tx.Q, cr, changeID)
		if err != nil {
			return err
		}
		c.ID, c.ChangeRequestID, c.CreatedAt = old.ID, cr.ID, tx.Now()
		if err := recordVersion(tx.Q, cr, &c); err != nil {
			return err
		}
		if err := tx.UpdateChangeRequestChange(c); err != nil {
			return err
		}
		revoked, err := s.backToReview(tx, p, &cr)
		if err != nil {
			return err
		}
		ev := s.changeEvent("change-edited", p, cr, c)
		ev.Data.(map[string]any)["approvalsRevoked"] = revoked
		return tx.Event(ev)
	})
	if err != nil {
		return View{}, err
	}
	return s.Get(ctx, project, id)
}

// changeOf returns change changeID of cr (404 otherwise).
func changeOf(q store.Q, cr store.ChangeRequest, changeID int64) (store.ChangeRequestChange, error) {
	changes, err := q.ChangeRequestChanges(cr.ID)
	if err != nil {
		return store.ChangeRequestChange{}, err
	}
	for _, c := range changes {
		if c.ID == changeID {
			return c, nil
		}
	}
	return store.ChangeRequestChange{}, apierr.NotFound("Change request %d has no change with id %d.", cr.ID, changeID)
}

// DiscardChange removes one change of an open request as its author; a
// request past Draft goes back to review, its approvals taken back.
func (s *Service) DiscardChange(ctx context.Context, p *domain.Principal, project string, id, changeID int64) error {
	if p == nil {
		return apierr.Unauthenticated("You must log in to use Bunting.")
	}
	return s.store.Tx(ctx, func(tx *store.Tx) error {
		cr, err := editable(tx, p, project, id)
		if err != nil {
			return err
		}
		c, err := changeOf(tx.Q, cr, changeID)
		if err != nil {
			return err
		}
		if err := tx.DeleteChangeRequestChange(c.ID); err != nil {
			return err
		}
		revoked, err := s.backToReview(tx, p, &cr)
		if err != nil {
			return err
		}
		ev := s.changeEvent("change-discarded", p, cr, c)
		ev.Data.(map[string]any)["approvalsRevoked"] = revoked
		return tx.Event(ev)
	})
}

// Discard deletes a draft as its author.
func (s *Service) Discard(ctx context.Context, p *domain.Principal, project string, id int64) error {
	if p == nil {
		return apierr.Unauthenticated("You must log in to use Bunting.")
	}
	return s.store.Tx(ctx, func(tx *store.Tx) error {
		cr, err := editable(tx, p, project, id)
		if err != nil {
			return err
		}
		if cr.State != store.CRDraft {
			return apierr.Validation("Change request %d is %s: only a draft is discarded; cancel it instead.", cr.ID, cr.State)
		}
		if err := tx.DeleteChangeRequest(cr.ID); err != nil {
			return err
		}
		return tx.Event(s.event("change-request-discarded", p, cr, nil))
	})
}

// SetTitle renames an open request as its author.
func (s *Service) SetTitle(ctx context.Context, p *domain.Principal, project string, id int64, in TitleInput) error {
	if p == nil {
		return apierr.Unauthenticated("You must log in to use Bunting.")
	}
	title := strings.TrimSpace(in.Title)
	if title == "" || utf8.RuneCountInString(title) > maxTitle {
		return apierr.Validation("The `title` property must have 1 to %d characters.", maxTitle)
	}
	return s.store.Record(ctx, func(tx *store.Tx) error {
		cr, err := editable(tx, p, project, id)
		if err != nil {
			return err
		}
		cr.Title = title
		return tx.UpdateChangeRequest(cr)
	})
}

// AddComment adds p's comment to a request.
func (s *Service) AddComment(ctx context.Context, p *domain.Principal, project string, id int64, in CommentInput) error {
	if p == nil {
		return apierr.Unauthenticated("You must log in to use Bunting.")
	}
	text := strings.TrimSpace(in.Text)
	if text == "" || utf8.RuneCountInString(text) > maxComment {
		return apierr.Validation("The `text` property must have 1 to %d characters.", maxComment)
	}
	return s.store.Record(ctx, func(tx *store.Tx) error {
		if _, err := locked(tx, project, id); err != nil {
			return err
		}
		_, err := tx.InsertChangeRequestComment(store.ChangeRequestComment{ChangeRequestID: id, Text: text, CreatedBy: p.Name, CreatedByUserID: p.UserID, CreatedAt: tx.Now()})
		return err
	})
}
