package changerequests

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// ConflictError is the answer to applying a request whose changes no
// longer apply as drafted: it names each.
type ConflictError struct {
	ID      int64
	Reasons []string
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("Change request %d cannot be applied: %s", e.ID, strings.Join(e.Reasons, " "))
}

// apiError is the 409 written for it.
func (e *ConflictError) apiError() error {
	return &apierr.Error{Kind: apierr.KindConflict, Name: "ChangeRequestConflictError", Message: e.Error()}
}

// SetState moves a request through its flow as p:
//
//	Draft → In review                      the author sends it to review
//	In review → Approved                   APPROVE_CHANGE_REQUEST, not the author; Approved once enough approve
//	In review, Approved, Scheduled → Rejected   APPROVE_CHANGE_REQUEST, not the author
//	Approved, Scheduled → Applied          APPLY_CHANGE_REQUEST: every change, in one transaction
//	Approved, Scheduled → Scheduled        APPLY_CHANGE_REQUEST, with scheduledAt in the future
//	any open state → Cancelled             the author, or ADMIN
//
// A comment given with the state is added to the request.
func (s *Service) SetState(ctx context.Context, p *domain.Principal, project string, id int64, in StateInput) (View, error) {
	if p == nil {
		return View{}, apierr.Unauthenticated("You must log in to use Bunting.")
	}
	var at *time.Time
	if in.ScheduledAt != nil {
		t, err := time.Parse(time.RFC3339Nano, *in.ScheduledAt)
		if err != nil {
			return View{}, apierr.Validation("The `scheduledAt` property must be a date and time in RFC 3339 form (for example 2026-03-01T09:00:00Z); you sent %q.", *in.ScheduledAt)
		}
		at = &t
	}
	comment := strings.TrimSpace(in.Comment)
	if len([]rune(comment)) > maxComment {
		return View{}, apierr.Validation("The `comment` property must have at most %d characters.", maxComment)
	}
	err := s.store.Tx(ctx, func(tx *store.Tx) error {
		cr, err := locked(tx, project, id)
		if err != nil {
			return err
		}
		if err := s.transition(tx, p, &cr, in.State, at); err != nil {
			return err
		}
		if comment != "" {
			_, err = tx.InsertChangeRequestComment(store.ChangeRequestComment{ChangeRequestID: id, Text: comment, CreatedBy: p.Name, CreatedByUserID: p.UserID, CreatedAt: tx.Now()})
		}
		return err
	})
	var conflict *ConflictError
	if errors.As(err, &conflict) {
		return View{}, conflict.apiError()
	}
	if err != nil {
		return View{}, err
	}
	if in.State == store.CRScheduled {
		s.notify()
	}
	return s.Get(ctx, project, id)
}

// transition makes one move of the flow (see SetState) in tx.
func (s *Service) transition(tx *store.Tx, p *domain.Principal, cr *store.ChangeRequest, state string, at *time.Time) error {
	author := principalKey(p) == cr.AuthorKey
	from := func(states ...string) error {
		if slices.Contains(states, cr.State) {
			return nil
		}
		return apierr.Validation("Change request %d is %s; it can become %s only from %s.", cr.ID, cr.State, state, strings.Join(states, " or "))
	}
	reviewer := func() error {
		if err := p.Require(domain.PermApproveChangeRequest, cr.Project, cr.Environment); err != nil {
			return err
		}
		if author {
			return apierr.Forbidden("You cannot approve or reject your own change request: another person with the %q permission must review it.", domain.PermApproveChangeRequest)
		}
		return nil
	}
	now := tx.Now()
	enter := func(typ string, extra map[string]any) error {
		cr.State = state
		cr.StateTimestamps[state] = now
		if err := tx.UpdateChangeRequest(*cr); err != nil {
			return err
		}
		return tx.Event(s.event(typ, p, *cr, extra))
	}
	switch state {
	case store.CRInReview:
		if !author {
			return apierr.Forbidden("Only the author of change request %d (%s) may send it to review.", cr.ID, cr.CreatedBy)
		}
		if err := from(store.CRDraft); err != nil {
			return err
		}
		changes, err := tx.ChangeRequestChanges(cr.ID)
		if err != nil {
			return err
		}
		if len(changes) == 0 {
			return apierr.Validation("Change request %d has no changes to review.", cr.ID)
		}
		setting, err := tx.ChangeRequestSetting(cr.Project, cr.Environment)
		if err != nil {
			return err
		}
		cr.MinApprovals = max(1, setting.RequiredApprovals)
		return enter("change-request-sent-to-review", nil)
	case store.CRApproved:
		if err := reviewer(); err != nil {
			return err
		}
		if err := from(store.CRInReview, store.CRApproved); err != nil {
			return err
		}
		if err := tx.SetChangeRequestReview(store.ChangeRequestReview{ChangeRequestID: cr.ID, ReviewerKey: principalKey(p), CreatedBy: p.Name,
			CreatedByUserID: p.UserID, CreatedAt: now}); err != nil {
			return err
		}
		if err := tx.Event(s.event("change-request-approval-added", p, *cr, nil)); err != nil {
			return err
		}
		reviews, err := tx.ChangeRequestReviews(cr.ID)
		if err != nil {
			return err
		}
		approvals := 0
		for _, r := range reviews {
			if !r.Rejected {
				approvals++
			}
		}
		if cr.State == store.CRApproved || approvals < cr.MinApprovals {
			return nil
		}
		return enter("change-request-approved", map[string]any{"approvals": approvals})
	case store.CRRejected:
		if err := reviewer(); err != nil {
			return err
		}
		if err := from(store.CRInReview, store.CRApproved, store.CRScheduled); err != nil {
			return err
		}
		if err := tx.SetChangeRequestReview(store.ChangeRequestReview{ChangeRequestID: cr.ID, ReviewerKey: principalKey(p), CreatedBy: p.Name,
			CreatedByUserID: p.UserID, Rejected: true, CreatedAt: now}); err != nil {
			return err
		}
		return enter("change-request-rejected", nil)
	case store.CRCancelled:
		if !author && !p.Can(domain.PermAdmin, cr.Project, "") {
			return apierr.Forbidden("Only the author of change request %d (%s) or an admin may cancel it.", cr.ID, cr.CreatedBy)
		}
		if err := from(store.OpenChangeRequestStates...); err != nil {
			return err
		}
		return enter("change-request-cancelled", nil)
	case store.CRApplied:
		if err := p.Require(domain.PermApplyChangeRequest, cr.Project, cr.Environment); err != nil {
			return err
		}
		if err := from(store.CRApproved, store.CRScheduled); err != nil {
			return err
		}
		if err := s.apply(tx, p, *cr); err != nil {
			return err
		}
		cr.ScheduleStatus, cr.ScheduleReason = "", ""
		return enter("change-request-applied", nil)
	case store.CRScheduled:
		if err := p.Require(domain.PermApplyChangeRequest, cr.Project, cr.Environment); err != nil {
			return err
		}
		if err := from(store.CRApproved, store.CRScheduled); err != nil {
			return err
		}
		if at == nil {
			return apierr.Validation("The `scheduledAt` property is required to schedule a change request: when it should apply itself.")
		}
		if !at.After(now) {
			return apierr.Validation("The `scheduledAt` property must be in the future; you sent %s and it is now %s.", at.UTC().Format(time.RFC3339), now.Format(time.RFC3339))
		}
		t := at.UTC()
		cr.ScheduledAt, cr.ScheduleStatus, cr.ScheduleReason, cr.ScheduledBy = &t, "pending", "", principalKey(p)
		return enter("change-request-scheduled", map[string]any{"scheduledAt": t.Format(time.RFC3339Nano)})
	case store.CRDraft:
		return apierr.Validation("A change request cannot go back to Draft; edit its changes instead (that sends it back to review).")
	default:
		return apierr.Validation("The `state` property must be one of In review, Approved, Rejected, Cancelled, Applied or Scheduled; you sent %q.", state)
	}
}

// apply makes every change of cr in tx as p, each through the domain
// operation of the matching admin route, after checking that none
// conflicts. It refuses with a *ConflictError naming the conflicts.
func (s *Service) apply(tx *store.Tx, p *domain.Principal, cr store.ChangeRequest) error {
	changes, err := tx.ChangeRequestChanges(cr.ID)
	if err != nil {
		return err
	}
	if len(changes) == 0 {
		return apierr.Validation("Change request %d has no changes to apply.", cr.ID)
	}
	if err := lockObjects(tx, changes); err != nil {
		return err
	}
	var reasons []string
	for _, c := range changes {
		why, err := conflict(tx.Q, cr, c)
		if err != nil {
			return err
		}
		if why != "" {
			reasons = append(reasons, why)
		}
	}
	if len(reasons) > 0 {
		return &ConflictError{ID: cr.ID, Reasons: reasons}
	}
	applier := *p
	applier.ChangeRequest = cr.ID
	for i, c := range changes {
		if err := actions[c.Action].run(tx, &applier, cr, c); err != nil {
			return describeError(err, i, len(changes), c)
		}
	}
	return nil
}

// lockObjects locks the flags and segments changes change, in one order
// (flags by name, then segments by id), so that concurrent applications
// cannot deadlock.
func lockObjects(tx *store.Tx, changes []store.ChangeRequestChange) error {
	var (
		flags    []string
		segments []int
	)
	for _, c := range changes {
		if c.SegmentID != 0 {
			segments = append(segments, c.SegmentID)
		} else {
			flags = append(flags, c.Feature)
		}
	}
	slices.Sort(flags)
	slices.Sort(segments)
	for _, f := range slices.Compact(flags) {
		if err := tx.LockFeature(f); err != nil {
			return err
		}
	}
	for _, sg := range slices.Compact(segments) {
		if err := tx.LockSegment(sg); err != nil {
			return err
		}
	}
	return nil
}

// scheduler returns the principal a scheduled request applies as: who
// scheduled it, with the role that person holds now.
func scheduler(q store.Q, cr store.ChangeRequest) (*domain.Principal, error) {
	kind, name, _ := strings.Cut(cr.ScheduledBy, ":")
	switch kind {
	case "user":
		id, err := strconv.ParseInt(name, 10, 64)
		if err != nil {
			break
		}
		u, err := q.User(id)
		if apierr.IsKind(err, apierr.KindNotFound) {
			return nil, apierr.Forbidden("The person who scheduled change request %d no longer exists.", cr.ID)
		}
		if err != nil {
			return nil, err
		}
		return domain.UserPrincipal(u), nil
	case "token":
		uid := int64(-42)
		return &domain.Principal{Kind: domain.KindAdminToken, Name: name, UserID: &uid, RootRole: domain.RoleAdmin}, nil
	}
	return nil, apierr.Forbidden("Change request %d has no one to apply it as.", cr.ID)
}

// ApplyScheduled applies request id when its pending schedule is due, in
// one transaction that moves it from Scheduled to Applied: whichever
// instance gets there first applies it, the others find it applied. It
// reports whether it applied the request. A request that no longer applies
// is suspended (change-request-schedule-suspended), one that fails
// otherwise is marked failed (change-request-scheduled-application-failure),
// each with the reason; an error that may pass (the database) is returned
// and the request stays due.
func (s *Service) ApplyScheduled(ctx context.Context, id int64) (bool, error) {
	applied := false
	err := s.store.Tx(ctx, func(tx *store.Tx) error {
		applied = false
		if err := tx.LockChangeRequest(id); err != nil {
			return err
		}
		cr, err := tx.ChangeRequest(id)
		if err != nil {
			return err
		}
		if cr.State != store.CRScheduled || cr.ScheduleStatus != "pending" || cr.ScheduledAt == nil || cr.ScheduledAt.After(tx.Now()) {
			return nil
		}
		p, err := scheduler(tx.Q, cr)
		if err != nil {
			return err
		}
		if err := s.apply(tx, p, cr); err != nil {
			return err
		}
		cr.State = store.CRApplied
		cr.StateTimestamps[store.CRApplied] = tx.Now()
		cr.ScheduleStatus, cr.ScheduleReason = "", ""
		if err := tx.UpdateChangeRequest(cr); err != nil {
			return err
		}
		if err := tx.Event(s.event("change-request-applied", p, cr, nil)); err != nil {
			return err
		}
		applied = true
		return tx.Event(s.event("change-request-scheduled-application-success", p, cr, map[string]any{"scheduledAt": cr.ScheduledAt.Format(time.RFC3339Nano)}))
	})
	var conflict *ConflictError
	var apiErr *apierr.Error
	switch {
	case err == nil:
		return applied, nil
	case errors.As(err, &conflict):
		return false, s.markSchedule(ctx, id, "suspended", conflict.Error())
	case errors.As(err, &apiErr) && apiErr.Kind != apierr.KindInternal && apiErr.Kind != apierr.KindUnavailable:
		return false, s.markSchedule(ctx, id, "failed", apiErr.Message)
	default:
		return false, err
	}
}

// markSchedule records why a due request was not applied, with its event,
// unless it was meanwhile applied, changed or rescheduled.
func (s *Service) markSchedule(ctx context.Context, id int64, status, reason string) error {
	return s.store.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.LockChangeRequest(id); err != nil {
			return err
		}
		cr, err := tx.ChangeRequest(id)
		if err != nil || cr.State != store.CRScheduled || cr.ScheduleStatus != "pending" {
			return err
		}
		cr.ScheduleStatus, cr.ScheduleReason = status, reason
		if err := tx.UpdateChangeRequest(cr); err != nil {
			return err
		}
		typ := "change-request-schedule-suspended"
		if status == "failed" {
			typ = "change-request-scheduled-application-failure"
		}
		p, err := scheduler(tx.Q, cr)
		if err != nil {
			p = &domain.Principal{Name: "change-request-scheduler"}
		}
		s.log.Warn("changerequests: a scheduled change request was not applied", "id", id, "status", status, "reason", reason)
		return tx.Event(s.event(typ, p, cr, map[string]any{"reason": reason, "scheduledAt": cr.ScheduledAt.Format(time.RFC3339Nano)}))
	})
}

// errPreview rolls back a preview's transaction.
var errPreview = errors.New("changerequests: preview")

// Preview runs read inside a transaction where request id of project (any
// project when project is "") has been applied, then rolls everything
// back: the playground evaluates a context as if the request were applied.
// A request that conflicts is refused as applying it would be.
func (s *Service) Preview(ctx context.Context, p *domain.Principal, project string, id int64, read func(q store.Q) error) error {
	if p == nil {
		return apierr.Unauthenticated("You must log in to use Bunting.")
	}
	err := s.store.Tx(ctx, func(tx *store.Tx) error {
		cr, err := tx.ChangeRequest(id)
		if err != nil {
			return err
		}
		if project != "" && cr.Project != project {
			return apierr.NotFound("Could not find a change request with id %d in project %s.", id, project)
		}
		if !slices.Contains(store.OpenChangeRequestStates, cr.State) {
			return apierr.Validation("Change request %d is %s: only an open request can be previewed.", id, cr.State)
		}
		uid := int64(-42)
		previewer := &domain.Principal{Kind: domain.KindAdminToken, Name: p.Name, UserID: &uid, RootRole: domain.RoleAdmin}
		if err := s.apply(tx, previewer, cr); err != nil {
			return err
		}
		if err := read(tx.Q); err != nil {
			return err
		}
		return errPreview
	})
	var conflict *ConflictError
	switch {
	case errors.Is(err, errPreview):
		return nil
	case errors.As(err, &conflict):
		return conflict.apiError()
	default:
		return err
	}
}
