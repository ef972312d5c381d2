package changerequests_test

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server/servertest"
)

const (
	project = "/api/admin/projects/default"
	prodCR  = project + "/environments/production/change-requests"
)

// people are the principals of a test: two editors (author and reviewer),
// a viewer, and the admin token.
type people struct {
	alice, bob, viewer, admin string
}

func setup(t *testing.T, h *servertest.Harness, approvals int) people {
	t.Helper()
	ps := people{
		alice:  h.UserToken(t, "alice", "Editor"),
		bob:    h.UserToken(t, "bob", "Editor"),
		viewer: h.UserToken(t, "victor", "Viewer"),
		admin:  h.AdminToken,
	}
	h.Do(t, "PUT", project+"/environments/production/change-requests/config", ps.admin,
		map[string]any{"changeRequestsEnabled": true, "requiredApprovals": approvals}).Want(t, 204)
	return ps
}

func createFlag(t *testing.T, h *servertest.Harness, name string) {
	t.Helper()
	h.Do(t, "POST", project+"/features", h.AdminToken, map[string]any{"name": name}).Want(t, 201)
}

// addStrategy adds a strategy directly as the admin (who holds
// SKIP_CHANGE_REQUEST) and returns its id.
func addStrategy(t *testing.T, h *servertest.Harness, flag, env string, rollout string) string {
	t.Helper()
	var st struct{ ID string }
	h.Do(t, "POST", fmt.Sprintf("%s/features/%s/environments/%s/strategies", project, flag, env), h.AdminToken,
		map[string]any{"name": "flexibleRollout", "parameters": map[string]any{"rollout": rollout, "stickiness": "default", "groupId": flag}}).Want(t, 200).JSON(t, &st)
	return st.ID
}

type crView struct {
	ID           int64  `json:"id"`
	State        string `json:"state"`
	MinApprovals int    `json:"minApprovals"`
	Conflict     string `json:"conflict"`
	Features     []struct {
		Name    string `json:"name"`
		Changes []struct {
			ID          int64    `json:"id"`
			Action      string   `json:"action"`
			Conflict    string   `json:"conflict"`
			Description string   `json:"description"`
			Diff        []string `json:"diff"`
		} `json:"changes"`
	} `json:"features"`
	Approvals []struct {
		CreatedBy struct{ Username string } `json:"createdBy"`
	} `json:"approvals"`
	Comments        []struct{ Text string } `json:"comments"`
	StateTimestamps map[string]time.Time    `json:"stateTimestamps"`
	Schedule        *struct {
		ScheduledAt time.Time `json:"scheduledAt"`
		Status      string    `json:"status"`
		Reason      string    `json:"reason"`
	} `json:"schedule"`
}

func draft(t *testing.T, h *servertest.Harness, token string, body any) crView {
	t.Helper()
	var v crView
	h.Do(t, "POST", prodCR, token, body).Want(t, 200).JSON(t, &v)
	return v
}

func getCR(t *testing.T, h *servertest.Harness, id int64) crView {
	t.Helper()
	var v crView
	h.Do(t, "GET", fmt.Sprintf("%s/change-requests/%d", project, id), h.AdminToken, nil).Want(t, 200).JSON(t, &v)
	return v
}

func setState(h *servertest.Harness, t *testing.T, token string, id int64, body map[string]any) *servertest.Response {
	t.Helper()
	return h.Do(t, "PUT", fmt.Sprintf("%s/change-requests/%d/state", project, id), token, body)
}

// sdkEnabled reports whether a production SDK sees flag on.
func sdkEnabled(t *testing.T, h *servertest.Harness, flag string) bool {
	t.Helper()
	var body struct {
		Features []struct {
			Name    string
			Enabled bool
		}
	}
	h.Do(t, "GET", "/api/client/features", servertest.ProdToken, nil).Want(t, 200).JSON(t, &body)
	for _, f := range body.Features {
		if f.Name == flag {
			return f.Enabled
		}
	}
	t.Fatalf("flag %s not served", flag)
	return false
}

// eventTypes lists the types of the events about project default, oldest
// first.
func eventTypes(t *testing.T, h *servertest.Harness) []string {
	t.Helper()
	var body struct {
		Events []struct {
			Type string `json:"type"`
		} `json:"events"`
	}
	h.Do(t, "GET", "/api/admin/events?project=default", h.AdminToken, nil).Want(t, 200).JSON(t, &body)
	var out []string
	for i := len(body.Events) - 1; i >= 0; i-- {
		out = append(out, body.Events[i].Type)
	}
	return out
}

func TestDirectChangeOfProtectedEnvironmentIsRefused(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		ps := setup(t, h, 1)
		createFlag(t, h, "checkout")
		prod := project + "/features/checkout/environments/production"
		h.Do(t, "POST", prod+"/on", ps.alice, nil).WantError(t, 403, "NoAccessError", "SKIP_CHANGE_REQUEST", "production")
		h.Do(t, "POST", prod+"/strategies", ps.alice, map[string]any{"name": "default"}).WantError(t, 403, "NoAccessError", "SKIP_CHANGE_REQUEST")
		h.Do(t, "PUT", prod+"/variants", ps.alice, []any{}).WantError(t, 403, "NoAccessError", "SKIP_CHANGE_REQUEST")
		h.Do(t, "DELETE", project+"/features/checkout", ps.alice, nil).WantError(t, 403, "NoAccessError", "SKIP_CHANGE_REQUEST")
		h.Do(t, "POST", "/api/admin/projects/default/bulk_features/environments/production/on", ps.alice,
			map[string]any{"features": []string{"checkout"}}).WantError(t, 403, "NoAccessError", "SKIP_CHANGE_REQUEST")
		// A segment used in production is protected too.
		var sg struct{ ID int }
		h.Do(t, "POST", "/api/admin/segments", ps.admin, map[string]any{"name": "beta", "constraints": []any{}}).Want(t, 201).JSON(t, &sg)
		h.Do(t, "POST", prod+"/strategies", ps.admin, map[string]any{"name": "default", "segments": []int{sg.ID}}).Want(t, 200)
		h.Do(t, "PUT", fmt.Sprintf("/api/admin/segments/%d", sg.ID), ps.alice, map[string]any{"name": "beta2", "constraints": []any{}}).
			WantError(t, 403, "NoAccessError", "SKIP_CHANGE_REQUEST")
		// Other environments, and the admin (who holds SKIP_CHANGE_REQUEST), change directly.
		h.Do(t, "POST", project+"/features/checkout/environments/development/on", ps.alice, nil).Want(t, 200)
		h.Do(t, "POST", prod+"/on", ps.admin, nil).Want(t, 200)
		if !sdkEnabled(t, h, "checkout") {
			t.Fatal("the admin's direct change did not apply")
		}
	})
}

func TestFourEyesFlow(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		ps := setup(t, h, 1)
		createFlag(t, h, "checkout")
		// The viewer cannot draft: the change's own permission is checked.
		h.Do(t, "POST", prodCR, ps.viewer, map[string]any{"feature": "checkout", "action": "updateEnabled", "payload": map[string]any{"enabled": true}}).
			WantError(t, 403, "NoAccessError", "UPDATE_FEATURE_ENVIRONMENT")
		// A change is validated when it is added.
		h.Do(t, "POST", prodCR, ps.alice, map[string]any{"feature": "checkout", "action": "addStrategy", "payload": map[string]any{"name": "no-such-type"}}).
			WantError(t, 400, "ValidationError", "no-such-type")
		v := draft(t, h, ps.alice, []map[string]any{
			{"feature": "checkout", "action": "addStrategy", "payload": map[string]any{"name": "flexibleRollout", "parameters": map[string]any{"rollout": "30", "stickiness": "default", "groupId": "checkout"}}},
			{"feature": "checkout", "action": "updateEnabled", "payload": map[string]any{"enabled": true}},
		})
		if v.State != "Draft" || len(v.Features) != 1 || len(v.Features[0].Changes) != 2 {
			t.Fatalf("draft = %+v", v)
		}
		// A second change goes into the same draft.
		again := draft(t, h, ps.alice, map[string]any{"feature": "checkout", "action": "patchVariant", "payload": map[string]any{"variants": []any{}}})
		if again.ID != v.ID || len(again.Features[0].Changes) != 3 {
			t.Fatalf("second change made another draft or was lost: %+v", again)
		}
		h.Do(t, "DELETE", fmt.Sprintf("%s/change-requests/%d/changes/%d", project, v.ID, again.Features[0].Changes[2].ID), ps.alice, nil).Want(t, 200)
		got := getCR(t, h, v.ID)
		if d := got.Features[0].Changes[1].Description; d != "Turn flag checkout on in production" {
			t.Fatalf("description = %q", d)
		}
		// Bob cannot send Alice's draft to review; Alice can.
		setState(h, t, ps.bob, v.ID, map[string]any{"state": "In review"}).WantError(t, 403, "NoAccessError", "author")
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "In review", "comment": "please look"}).Want(t, 200)
		// The author cannot approve; the viewer cannot either.
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "Approved"}).WantError(t, 403, "NoAccessError", "your own")
		setState(h, t, ps.viewer, v.ID, map[string]any{"state": "Approved"}).WantError(t, 403, "NoAccessError", "APPROVE_CHANGE_REQUEST")
		// Not applied before approval.
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "Applied"}).WantError(t, 400, "ValidationError", "In review")
		var approved crView
		setState(h, t, ps.bob, v.ID, map[string]any{"state": "Approved"}).Want(t, 200).JSON(t, &approved)
		if approved.State != "Approved" || len(approved.Approvals) != 1 || approved.Approvals[0].CreatedBy.Username != "bob" {
			t.Fatalf("after approval: %+v", approved)
		}
		if sdkEnabled(t, h, "checkout") {
			t.Fatal("SDKs see the change before it is applied")
		}
		var applied crView
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "Applied"}).Want(t, 200).JSON(t, &applied)
		if applied.State != "Applied" || len(applied.Comments) != 1 || applied.Comments[0].Text != "please look" {
			t.Fatalf("after applying: %+v", applied)
		}
		if !sdkEnabled(t, h, "checkout") {
			t.Fatal("SDKs do not see the applied change")
		}
		want := []string{"change-request-configuration-updated", "change-request-created", "change-added", "change-added", "change-added", "change-discarded",
			"change-request-sent-to-review", "change-request-approval-added", "change-request-approved",
			"feature-strategy-add", "feature-environment-enabled", "change-request-applied"}
		var crEvents []string
		for _, e := range eventTypes(t, h) {
			if strings.HasPrefix(e, "change") || e == "feature-strategy-add" || e == "feature-environment-enabled" {
				crEvents = append(crEvents, e)
			}
		}
		if !slices.Equal(crEvents, want) {
			t.Fatalf("events:\n got %v\nwant %v", crEvents, want)
		}
		// Applied is final.
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "Cancelled"}).WantError(t, 400, "ValidationError", "Applied")
	})
}

func TestEditingTakesApprovalsBack(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		ps := setup(t, h, 1)
		createFlag(t, h, "checkout")
		v := draft(t, h, ps.alice, map[string]any{"feature": "checkout", "action": "updateEnabled", "payload": map[string]any{"enabled": true}})
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "In review"}).Want(t, 200)
		setState(h, t, ps.bob, v.ID, map[string]any{"state": "Approved"}).Want(t, 200)
		changeID := v.Features[0].Changes[0].ID
		// Only the author edits.
		h.Do(t, "PUT", fmt.Sprintf("%s/change-requests/%d/changes/%d", project, v.ID, changeID), ps.bob,
			map[string]any{"feature": "checkout", "action": "updateEnabled", "payload": map[string]any{"enabled": false}}).WantError(t, 403, "NoAccessError", "author")
		var edited crView
		h.Do(t, "PUT", fmt.Sprintf("%s/change-requests/%d/changes/%d", project, v.ID, changeID), ps.alice,
			map[string]any{"feature": "checkout", "action": "updateEnabled", "payload": map[string]any{"enabled": false}}).Want(t, 200).JSON(t, &edited)
		if edited.State != "In review" || len(edited.Approvals) != 0 {
			t.Fatalf("after editing an approved request: state %s, %d approvals; want In review and none", edited.State, len(edited.Approvals))
		}
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "Applied"}).WantError(t, 400, "ValidationError", "In review")
	})
}

func TestConflictingRequestRefusesToApply(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		ps := setup(t, h, 1)
		createFlag(t, h, "checkout")
		id := addStrategy(t, h, "checkout", "production", "10")
		v := draft(t, h, ps.alice, map[string]any{"feature": "checkout", "action": "updateStrategy",
			"payload": map[string]any{"id": id, "name": "flexibleRollout", "parameters": map[string]any{"rollout": "50", "stickiness": "default", "groupId": "checkout"}}})
		got := getCR(t, h, v.ID)
		if d := got.Features[0].Changes[0].Diff; !slices.Contains(d, `parameters.rollout: "10" → "50"`) {
			t.Fatalf("diff = %q", d)
		}
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "In review"}).Want(t, 200)
		setState(h, t, ps.bob, v.ID, map[string]any{"state": "Approved"}).Want(t, 200)
		// Someone who may skip change requests changes the strategy meanwhile.
		h.Do(t, "PUT", fmt.Sprintf("%s/features/checkout/environments/production/strategies/%s", project, id), ps.admin,
			map[string]any{"name": "flexibleRollout", "parameters": map[string]any{"rollout": "20", "stickiness": "default", "groupId": "checkout"}}).Want(t, 200)
		if c := getCR(t, h, v.ID); !strings.Contains(c.Conflict, "was changed since this change was drafted") {
			t.Fatalf("conflict not shown: %+v", c)
		}
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "Applied"}).
			WantError(t, 409, "ChangeRequestConflictError", "Strategy "+id, "was changed since this change was drafted")
		var st struct{ Parameters map[string]string }
		h.Do(t, "GET", fmt.Sprintf("%s/features/checkout/environments/production/strategies/%s", project, id), ps.admin, nil).Want(t, 200).JSON(t, &st)
		if st.Parameters["rollout"] != "20" {
			t.Fatalf("the conflicting request overwrote the strategy: %v", st.Parameters)
		}
	})
}

func TestApplyingIsOneTransaction(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		ps := setup(t, h, 1)
		createFlag(t, h, "checkout")
		createFlag(t, h, "parent")
		v := draft(t, h, ps.alice, []map[string]any{
			{"feature": "checkout", "action": "updateEnabled", "payload": map[string]any{"enabled": true}},
			{"feature": "checkout", "action": "addDependency", "payload": map[string]any{"feature": "parent"}},
		})
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "In review"}).Want(t, 200)
		setState(h, t, ps.bob, v.ID, map[string]any{"state": "Approved"}).Want(t, 200)
		// The parent is archived meanwhile: the second change fails.
		h.Do(t, "DELETE", project+"/features/parent", ps.admin, nil).Want(t, 202)
		before := len(eventTypes(t, h))
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "Applied"}).WantError(t, 403, "InvalidOperationError", "Change 2", "parent")
		if sdkEnabled(t, h, "checkout") {
			t.Fatal("the first change was applied although the second failed")
		}
		if after := len(eventTypes(t, h)); after != before {
			t.Fatalf("%d events written by a failed application", after-before)
		}
		if got := getCR(t, h, v.ID); got.State != "Approved" {
			t.Fatalf("state after a failed application = %s", got.State)
		}
	})
}

func TestScheduledRequestAppliesItselfAndSuspends(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		ps := setup(t, h, 1)
		createFlag(t, h, "checkout")
		v := draft(t, h, ps.alice, map[string]any{"feature": "checkout", "action": "updateEnabled", "payload": map[string]any{"enabled": true}})
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "In review"}).Want(t, 200)
		setState(h, t, ps.bob, v.ID, map[string]any{"state": "Approved"}).Want(t, 200)
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "Scheduled", "scheduledAt": time.Now().Add(-time.Minute).Format(time.RFC3339)}).
			WantError(t, 400, "ValidationError", "future")
		setState(h, t, ps.viewer, v.ID, map[string]any{"state": "Scheduled", "scheduledAt": time.Now().Add(time.Hour).Format(time.RFC3339)}).
			WantError(t, 403, "NoAccessError", "APPLY_CHANGE_REQUEST")
		at := time.Now().Add(2 * time.Second).UTC().Truncate(time.Millisecond)
		var sched crView
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "Scheduled", "scheduledAt": at.Format(time.RFC3339Nano)}).Want(t, 200).JSON(t, &sched)
		if sched.Schedule == nil || sched.Schedule.Status != "pending" || !sched.Schedule.ScheduledAt.Equal(at) {
			t.Fatalf("schedule = %+v", sched.Schedule)
		}
		waitFor(t, at.Add(1500*time.Millisecond), func() bool { return sdkEnabled(t, h, "checkout") })
		if got := getCR(t, h, v.ID); got.State != "Applied" {
			t.Fatalf("state = %s", got.State)
		}
		if n := count(eventTypes(t, h), "change-request-scheduled-application-success"); n != 1 {
			t.Fatalf("%d scheduled-application-success events", n)
		}

		// A schedule whose change no longer applies is suspended, with why.
		id := addStrategy(t, h, "checkout", "production", "10")
		w := draft(t, h, ps.alice, map[string]any{"feature": "checkout", "action": "deleteStrategy", "payload": map[string]any{"id": id}})
		setState(h, t, ps.alice, w.ID, map[string]any{"state": "In review"}).Want(t, 200)
		setState(h, t, ps.bob, w.ID, map[string]any{"state": "Approved"}).Want(t, 200)
		at = time.Now().Add(1500 * time.Millisecond)
		setState(h, t, ps.alice, w.ID, map[string]any{"state": "Scheduled", "scheduledAt": at.Format(time.RFC3339Nano)}).Want(t, 200)
		h.Do(t, "PUT", fmt.Sprintf("%s/features/checkout/environments/production/strategies/%s", project, id), ps.admin,
			map[string]any{"name": "flexibleRollout", "parameters": map[string]any{"rollout": "20", "stickiness": "default", "groupId": "checkout"}}).Want(t, 200)
		var suspended crView
		waitFor(t, at.Add(3*time.Second), func() bool {
			suspended = getCR(t, h, w.ID)
			return suspended.Schedule != nil && suspended.Schedule.Status == "suspended"
		})
		if suspended.State != "Scheduled" || !strings.Contains(suspended.Schedule.Reason, "was changed since this change was drafted") {
			t.Fatalf("suspended = %+v", suspended.Schedule)
		}
		if n := count(eventTypes(t, h), "change-request-schedule-suspended"); n != 1 {
			t.Fatalf("%d schedule-suspended events", n)
		}
		// Edited against the current strategy, reviewed again and rescheduled, it applies.
		h.Do(t, "PUT", fmt.Sprintf("%s/change-requests/%d/changes/%d", project, w.ID, w.Features[0].Changes[0].ID), ps.alice,
			map[string]any{"feature": "checkout", "action": "deleteStrategy", "payload": map[string]any{"id": id}}).Want(t, 200)
		setState(h, t, ps.bob, w.ID, map[string]any{"state": "Approved"}).Want(t, 200)
		setState(h, t, ps.alice, w.ID, map[string]any{"state": "Scheduled", "scheduledAt": time.Now().Add(time.Second).Format(time.RFC3339Nano)}).Want(t, 200)
		waitFor(t, time.Now().Add(5*time.Second), func() bool { return getCR(t, h, w.ID).State == "Applied" })
	})
}

func waitFor(t *testing.T, deadline time.Time, cond func() bool) {
	t.Helper()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not done by %s (it is %s)", deadline.Format(time.StampMilli), time.Now().Format(time.StampMilli))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func count(list []string, s string) int {
	n := 0
	for _, v := range list {
		if v == s {
			n++
		}
	}
	return n
}

var _ = json.Marshal

func TestApprovalsRejectionAndCancel(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		ps := setup(t, h, 2)
		carol := h.UserToken(t, "carol", "Editor")
		createFlag(t, h, "checkout")
		v := draft(t, h, ps.alice, map[string]any{"feature": "checkout", "action": "updateEnabled", "payload": map[string]any{"enabled": true}})
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "In review"}).Want(t, 200)
		var after crView
		setState(h, t, ps.bob, v.ID, map[string]any{"state": "Approved"}).Want(t, 200).JSON(t, &after)
		if after.State != "In review" || after.MinApprovals != 2 || len(after.Approvals) != 1 {
			t.Fatalf("one of two approvals: %+v", after)
		}
		// The same person approving twice still counts once.
		setState(h, t, ps.bob, v.ID, map[string]any{"state": "Approved"}).Want(t, 200).JSON(t, &after)
		if after.State != "In review" || len(after.Approvals) != 1 {
			t.Fatalf("a second approval by the same person counted: %+v", after)
		}
		setState(h, t, carol, v.ID, map[string]any{"state": "Approved"}).Want(t, 200).JSON(t, &after)
		if after.State != "Approved" || len(after.Approvals) != 2 {
			t.Fatalf("two approvals: %+v", after)
		}
		// A reviewer rejects; a rejected request is final.
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "Rejected"}).WantError(t, 403, "NoAccessError", "your own")
		setState(h, t, carol, v.ID, map[string]any{"state": "Rejected", "comment": "not this week"}).Want(t, 200)
		setState(h, t, ps.alice, v.ID, map[string]any{"state": "Applied"}).WantError(t, 400, "ValidationError", "Rejected")
		// Only the author (or an admin) cancels.
		w := draft(t, h, ps.alice, map[string]any{"feature": "checkout", "action": "updateEnabled", "payload": map[string]any{"enabled": true}})
		setState(h, t, ps.bob, w.ID, map[string]any{"state": "Cancelled"}).WantError(t, 403, "NoAccessError", "author")
		setState(h, t, ps.alice, w.ID, map[string]any{"state": "Cancelled"}).Want(t, 200)
		// Bad input gets clear answers.
		setState(h, t, ps.alice, w.ID, map[string]any{"state": "Sideways"}).WantError(t, 400, "ValidationError", "state")
		setState(h, t, ps.alice, w.ID, map[string]any{"state": "Scheduled", "scheduledAt": "tomorrow"}).WantError(t, 400, "ValidationError", "scheduledAt")
		h.Do(t, "PUT", project+"/change-requests/999999/state", ps.alice, map[string]any{"state": "Approved"}).WantError(t, 404, "NotFoundError")
		h.Do(t, "PUT", project+"/change-requests/abc/state", ps.alice, map[string]any{"state": "Approved"}).WantError(t, 400, "ValidationError", "id")
		h.Do(t, "POST", prodCR, ps.alice, map[string]any{"feature": "checkout", "action": "explode"}).WantError(t, 400, "ValidationError", "action")
		h.Do(t, "POST", prodCR, ps.alice, map[string]any{"feature": "nope", "action": "updateEnabled", "payload": map[string]any{"enabled": true}}).WantError(t, 404, "NotFoundError")
		h.Do(t, "POST", prodCR, ps.alice, map[string]any{"feature": "checkout", "action": "updateEnabled", "payload": map[string]any{"enabled": "yes"}}).
			WantError(t, 400, "ValidationError", "payload.enabled")
		h.Do(t, "POST", project+"/environments/development/change-requests", ps.alice, map[string]any{"feature": "checkout", "action": "updateEnabled",
			"payload": map[string]any{"enabled": true}}).WantError(t, 400, "ValidationError", "not enabled")
		h.Do(t, "PUT", project+"/environments/production/change-requests/config", ps.admin, map[string]any{"changeRequestsEnabled": true, "requiredApprovals": 11}).
			WantError(t, 400, "ValidationError", "requiredApprovals")
		h.Do(t, "PUT", project+"/environments/production/change-requests/config", ps.viewer, map[string]any{"changeRequestsEnabled": false}).
			WantError(t, 403, "NoAccessError", "UPDATE_PROJECT")
	})
}

func TestReadsAndPlaygroundPreview(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		ps := setup(t, h, 1)
		createFlag(t, h, "checkout")
		createFlag(t, h, "other")
		v := draft(t, h, ps.alice, map[string]any{"feature": "checkout", "action": "updateEnabled", "payload": map[string]any{"enabled": true}})
		var cfg []struct {
			Environment          string `json:"environment"`
			ChangeRequestEnabled bool   `json:"changeRequestEnabled"`
			RequiredApprovals    int    `json:"requiredApprovals"`
		}
		h.Do(t, "GET", project+"/change-requests/config", ps.viewer, nil).Want(t, 200).JSON(t, &cfg)
		if len(cfg) != 2 || cfg[1].Environment != "production" || !cfg[1].ChangeRequestEnabled || cfg[0].ChangeRequestEnabled {
			t.Fatalf("config = %+v", cfg)
		}
		var list []crView
		h.Do(t, "GET", project+"/change-requests/draft", ps.alice, nil).Want(t, 200).JSON(t, &list)
		if len(list) != 1 || list[0].ID != v.ID {
			t.Fatalf("alice's drafts = %+v", list)
		}
		h.Do(t, "GET", project+"/change-requests/draft", ps.bob, nil).Want(t, 200).JSON(t, &list)
		if len(list) != 0 {
			t.Fatalf("bob has drafts: %+v", list)
		}
		h.Do(t, "GET", project+"/change-requests/pending/checkout", ps.viewer, nil).Want(t, 200).JSON(t, &list)
		if len(list) != 1 {
			t.Fatalf("pending for checkout = %+v", list)
		}
		h.Do(t, "GET", project+"/change-requests/pending/other", ps.viewer, nil).Want(t, 200).JSON(t, &list)
		if len(list) != 0 {
			t.Fatalf("pending for other = %+v", list)
		}
		var counts map[string]int
		h.Do(t, "GET", project+"/change-requests/count", ps.viewer, nil).Want(t, 200).JSON(t, &counts)
		if counts["total"] != 1 || counts["reviewRequired"] != 0 {
			t.Fatalf("counts = %v", counts)
		}
		var found struct {
			ChangeRequests []struct {
				ID       int64    `json:"id"`
				Features []string `json:"features"`
			} `json:"changeRequests"`
			Total int `json:"total"`
		}
		h.Do(t, "GET", "/api/admin/search/change-requests?state=IS:open&limit=10", ps.viewer, nil).Want(t, 200).JSON(t, &found)
		if found.Total != 1 || found.ChangeRequests[0].ID != v.ID || found.ChangeRequests[0].Features[0] != "checkout" {
			t.Fatalf("search = %+v", found)
		}
		h.Do(t, "GET", "/api/admin/search/change-requests?state=IS:closed", ps.viewer, nil).Want(t, 200).JSON(t, &found)
		if found.Total != 0 {
			t.Fatalf("closed search = %+v", found)
		}
		h.Do(t, "GET", "/api/admin/search/change-requests?state=sometimes", ps.viewer, nil).WantError(t, 400, "ValidationError", "state")
		h.Do(t, "GET", "/api/admin/search/change-requests?limit=0", ps.viewer, nil).WantError(t, 400, "ValidationError", "limit")

		// The playground evaluates as if the request were applied, and changes nothing.
		before := len(eventTypes(t, h))
		evaluate := func(query string, body map[string]any) bool {
			t.Helper()
			var out struct {
				Features []struct {
					Name      string `json:"name"`
					IsEnabled bool   `json:"isEnabled"`
				} `json:"features"`
			}
			h.Do(t, "POST", "/api/admin/playground"+query, ps.viewer, body).Want(t, 200).JSON(t, &out)
			for _, f := range out.Features {
				if f.Name == "checkout" {
					return f.IsEnabled
				}
			}
			t.Fatal("checkout not evaluated")
			return false
		}
		ctx := map[string]any{"environment": "production", "context": map[string]any{"userId": "42"}}
		if evaluate("", ctx) {
			t.Fatal("checkout is on before anything is applied")
		}
		if !evaluate(fmt.Sprintf("?changeRequest=%d", v.ID), ctx) {
			t.Fatal("the playground does not evaluate as if the request were applied (query)")
		}
		if !evaluate("", map[string]any{"environment": "production", "context": map[string]any{}, "changeRequest": v.ID}) {
			t.Fatal("the playground does not evaluate as if the request were applied (body)")
		}
		if sdkEnabled(t, h, "checkout") || len(eventTypes(t, h)) != before {
			t.Fatal("the preview changed something")
		}
		h.Do(t, "POST", "/api/admin/playground?changeRequest=0", ps.viewer, ctx).WantError(t, 400, "ValidationError", "changeRequest")
		h.Do(t, "POST", "/api/admin/playground?changeRequest=424242", ps.viewer, ctx).WantError(t, 404, "NotFoundError")
	})
}

// Changes added at the same time by one person go into one draft.
func TestConcurrentAdditionsMakeOneDraft(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		ps := setup(t, h, 1)
		const n = 8
		for i := range n {
			createFlag(t, h, fmt.Sprintf("f%d", i))
		}
		var wg sync.WaitGroup
		codes := make([]int, n)
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[i] = h.Do(t, "POST", prodCR, ps.alice, map[string]any{"feature": fmt.Sprintf("f%d", i), "action": "updateEnabled", "payload": map[string]any{"enabled": true}}).Status
			}()
		}
		wg.Wait()
		for i, c := range codes {
			if c != 200 {
				t.Fatalf("addition %d answered %d", i, c)
			}
		}
		var drafts []crView
		h.Do(t, "GET", project+"/change-requests/draft", ps.alice, nil).Want(t, 200).JSON(t, &drafts)
		if len(drafts) != 1 || len(drafts[0].Features) != n {
			t.Fatalf("%d drafts, the first with %d flags; want one with %d", len(drafts), len(drafts[0].Features), n)
		}
	})
}

// A signal action that would switch a flag in a protected environment is
// refused like any other direct change, and its run says why.
func TestSignalActionInProtectedEnvironmentIsRefused(t *testing.T) {
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		setup(t, h, 1)
		createFlag(t, h, "checkout")
		h.Do(t, "POST", project+"/features/checkout/environments/production/on", h.AdminToken, nil).Want(t, 200)
		var sa, ep struct{ ID int64 }
		h.Do(t, "POST", "/api/admin/service-account", h.AdminToken, map[string]any{"username": "alert-bot", "name": "alert-bot", "rootRole": "Editor"}).Want(t, 201).JSON(t, &sa)
		h.Do(t, "POST", "/api/admin/signal-endpoints", h.AdminToken, map[string]any{"name": "grafana"}).Want(t, 201).JSON(t, &ep)
		var tok struct{ Token string }
		h.Do(t, "POST", fmt.Sprintf("/api/admin/signal-endpoints/%d/tokens", ep.ID), h.AdminToken, map[string]any{"name": "t"}).Want(t, 201).JSON(t, &tok)
		var as struct{ ID int64 }
		h.Do(t, "POST", project+"/actions", h.AdminToken, map[string]any{"name": "kill", "actorId": sa.ID,
			"match": map[string]any{"source": "signal-endpoint", "sourceId": ep.ID, "payload": map[string]any{}},
			"actions": []map[string]any{{"action": "TOGGLE_FEATURE_OFF", "sortOrder": 1,
				"executionParams": map[string]string{"project": "default", "environment": "production", "featureName": "checkout"}}}}).Want(t, 201).JSON(t, &as)
		h.Do(t, "POST", "/api/signal-endpoint/grafana", "Bearer "+tok.Token, map[string]any{"alert": "5xx"}).Want(t, 200)
		var runs string
		waitFor(t, time.Now().Add(10*time.Second), func() bool {
			runs = h.Do(t, "GET", fmt.Sprintf("%s/actions/%d/events", project, as.ID), h.AdminToken, nil).Want(t, 200).String()
			return strings.Contains(runs, "SKIP_CHANGE_REQUEST")
		})
		if !sdkEnabled(t, h, "checkout") {
			t.Fatalf("the signal action switched a protected environment directly: %s", runs)
		}
	})
}
