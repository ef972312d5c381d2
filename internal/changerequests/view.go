package changerequests

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// User is who made something, as Unleash names them.
type User struct {
	ID       *int64  `json:"id,omitempty"`
	Username string  `json:"username"`
	ImageURL *string `json:"imageUrl"`
}

// ChangeView is one change (changeRequestChangeSchema), with a sentence
// that says what it does and, for a change of something that exists, the
// lines that differ from its current configuration.
type ChangeView struct {
	ID        int64           `json:"id"`
	Action    string          `json:"action"`
	Payload   json.RawMessage `json:"payload"`
	Conflict  string          `json:"conflict,omitempty"`
	CreatedBy User            `json:"createdBy"`
	CreatedAt time.Time       `json:"createdAt"`
	// Description says what the change does, in a sentence.
	Description string `json:"description"`
	// Diff lists what the change changes: "path: before → after" lines.
	Diff []string `json:"diff,omitempty"`
}

// FeatureChanges are a flag's changes (changeRequestFeatureSchema).
type FeatureChanges struct {
	Name     string       `json:"name"`
	Conflict string       `json:"conflict,omitempty"`
	Changes  []ChangeView `json:"changes"`
}

// SegmentChange is a segment's change (changeRequestSegmentChangeSchema).
type SegmentChange struct {
	ChangeView
	Name string `json:"name"`
}

// Review is an approval or a rejection (changeRequestApprovalSchema).
type Review struct {
	CreatedBy User      `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
}

// Comment is a comment (changeRequestCommentSchema).
type Comment struct {
	ID        int64     `json:"id"`
	Text      string    `json:"text"`
	CreatedBy User      `json:"createdBy"`
	CreatedAt time.Time `json:"createdAt"`
}

// Schedule is a scheduled request's schedule (changeRequestScheduleSchema):
// pending, suspended or failed, with the reason.
type Schedule struct {
	ScheduledAt   time.Time `json:"scheduledAt"`
	Status        string    `json:"status"`
	Reason        string    `json:"reason,omitempty"`
	FailureReason *string   `json:"failureReason,omitempty"`
}

// View is a change request (changeRequestSchema).
type View struct {
	ID              int64                `json:"id"`
	Title           string               `json:"title,omitempty"`
	Project         string               `json:"project"`
	Environment     string               `json:"environment"`
	MinApprovals    int                  `json:"minApprovals"`
	CreatedBy       User                 `json:"createdBy"`
	CreatedAt       time.Time            `json:"createdAt"`
	Features        []FeatureChanges     `json:"features"`
	Segments        []SegmentChange      `json:"segments"`
	Approvals       []Review             `json:"approvals"`
	Rejections      []Review             `json:"rejections"`
	Comments        []Comment            `json:"comments"`
	State           string               `json:"state"`
	StateTimestamps map[string]time.Time `json:"stateTimestamps"`
	Schedule        *Schedule            `json:"schedule,omitempty"`
	// Conflict is set when any change conflicts: applying is refused.
	Conflict string `json:"conflict,omitempty"`
}

func user(name string, id *int64) User { return User{ID: id, Username: name} }

// Get returns request id of project (any project when project is "").
func (s *Service) Get(ctx context.Context, project string, id int64) (View, error) {
	q := s.store.Q(ctx)
	cr, err := q.ChangeRequest(id)
	if err != nil {
		return View{}, err
	}
	if project != "" && cr.Project != project {
		return View{}, apierr.NotFound("Could not find a change request with id %d in project %s.", id, project)
	}
	changes, err := q.ChangeRequestChanges(id)
	if err != nil {
		return View{}, err
	}
	v, err := view(q, cr, changes, true)
	if err != nil {
		return View{}, err
	}
	reviews, err := q.ChangeRequestReviews(id)
	if err != nil {
		return View{}, err
	}
	for _, r := range reviews {
		rv := Review{CreatedBy: user(r.CreatedBy, r.CreatedByUserID), CreatedAt: r.CreatedAt}
		if r.Rejected {
			v.Rejections = append(v.Rejections, rv)
		} else {
			v.Approvals = append(v.Approvals, rv)
		}
	}
	comments, err := q.ChangeRequestComments(id)
	if err != nil {
		return View{}, err
	}
	for _, c := range comments {
		v.Comments = append(v.Comments, Comment{ID: c.ID, Text: c.Text, CreatedBy: user(c.CreatedBy, c.CreatedByUserID), CreatedAt: c.CreatedAt})
	}
	return v, nil
}

// view builds a request's view from its changes; detailed adds each
// change's conflict, description and diff (the single request's page).
func view(q store.Q, cr store.ChangeRequest, changes []store.ChangeRequestChange, detailed bool) (View, error) {
	v := View{ID: cr.ID, Title: cr.Title, Project: cr.Project, Environment: cr.Environment, MinApprovals: cr.MinApprovals,
		CreatedBy: user(cr.CreatedBy, cr.CreatedByUserID), CreatedAt: cr.CreatedAt, State: cr.State, StateTimestamps: cr.StateTimestamps,
		Features: []FeatureChanges{}, Segments: []SegmentChange{}, Approvals: []Review{}, Rejections: []Review{}, Comments: []Comment{}}
	if cr.State == store.CRScheduled && cr.ScheduledAt != nil {
		v.Schedule = &Schedule{ScheduledAt: *cr.ScheduledAt, Status: cr.ScheduleStatus, Reason: cr.ScheduleReason}
		if cr.ScheduleStatus == "failed" {
			reason := cr.ScheduleReason
			v.Schedule.FailureReason = &reason
		}
	}
	open := slices.Contains(store.OpenChangeRequestStates, cr.State)
	var conflicts []string
	for _, c := range changes {
		cv := ChangeView{ID: c.ID, Action: c.Action, Payload: c.Payload, CreatedBy: user(c.CreatedBy, c.CreatedByUserID), CreatedAt: c.CreatedAt}
		if detailed {
			if open {
				why, err := conflict(q, cr, c)
				if err != nil {
					return v, err
				}
				cv.Conflict = why
				if why != "" {
					conflicts = append(conflicts, why)
				}
			}
			cv.Description, cv.Diff = describe(q, cr, c, open)
		}
		if c.SegmentID != 0 {
			name := ""
			if sg, err := q.Segment(c.SegmentID); err == nil {
				name = sg.Name
			}
			v.Segments = append(v.Segments, SegmentChange{ChangeView: cv, Name: name})
			continue
		}
		i := slices.IndexFunc(v.Features, func(f FeatureChanges) bool { return f.Name == c.Feature })
		if i < 0 {
			v.Features = append(v.Features, FeatureChanges{Name: c.Feature, Changes: []ChangeView{}})
			i = len(v.Features) - 1
		}
		v.Features[i].Changes = append(v.Features[i].Changes, cv)
		if cv.Conflict != "" && v.Features[i].Conflict == "" {
			v.Features[i].Conflict = cv.Conflict
		}
	}
	v.Conflict = strings.Join(conflicts, " ")
	return v, nil
}

// List lists the requests f selects, newest first, each with its changes
// (without conflicts, descriptions or reviews: see Get).
func (s *Service) List(ctx context.Context, f store.ChangeRequestFilter) ([]View, error) {
	q := s.store.Q(ctx)
	crs, err := q.ChangeRequests(f)
	if err != nil {
		return nil, err
	}
	ids := make([]int64, len(crs))
	for i, cr := range crs {
		ids[i] = cr.ID
	}
	changes, err := q.ChangeRequestChanges(ids...)
	if err != nil {
		return nil, err
	}
	out := make([]View, 0, len(crs))
	for _, cr := range crs {
		var own []store.ChangeRequestChange
		for _, c := range changes {
			if c.ChangeRequestID == cr.ID {
				own = append(own, c)
			}
		}
		v, err := view(q, cr, own, false)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

// SearchItem is one request in a search's answer
// (changeRequestSearchItemSchema).
type SearchItem struct {
	ID          int64     `json:"id"`
	Title       string    `json:"title,omitempty"`
	Project     string    `json:"project"`
	Environment string    `json:"environment"`
	State       string    `json:"state"`
	CreatedAt   time.Time `json:"createdAt"`
	CreatedBy   User      `json:"createdBy"`
	Features    []string  `json:"features"`
	Segments    []string  `json:"segments"`
	Schedule    *Schedule `json:"schedule,omitempty"`
}

// SearchResult is GET /api/admin/search/change-requests's answer
// (changeRequestSearchResponseSchema).
type SearchResult struct {
	ChangeRequests []SearchItem `json:"changeRequests"`
	Total          int          `json:"total"`
}

// Search lists the requests f selects, a page at a time, with the total.
func (s *Service) Search(ctx context.Context, f store.ChangeRequestFilter) (SearchResult, error) {
	total, err := s.store.Q(ctx).CountChangeRequests(f)
	if err != nil {
		return SearchResult{}, err
	}
	views, err := s.List(ctx, f)
	if err != nil {
		return SearchResult{}, err
	}
	out := SearchResult{ChangeRequests: []SearchItem{}, Total: total}
	for _, v := range views {
		it := SearchItem{ID: v.ID, Title: v.Title, Project: v.Project, Environment: v.Environment, State: v.State, CreatedAt: v.CreatedAt,
			CreatedBy: v.CreatedBy, Features: []string{}, Segments: []string{}, Schedule: v.Schedule}
		for _, f := range v.Features {
			it.Features = append(it.Features, f.Name)
		}
		for _, sg := range v.Segments {
			if !slices.Contains(it.Segments, sg.Name) {
				it.Segments = append(it.Segments, sg.Name)
			}
		}
		out.ChangeRequests = append(out.ChangeRequests, it)
	}
	return out, nil
}

// Counts are a project's requests by stage (changeRequestsCountSchema).
type Counts struct {
	Total          int `json:"total"`
	Applied        int `json:"applied"`
	Approved       int `json:"approved"`
	Rejected       int `json:"rejected"`
	ReviewRequired int `json:"reviewRequired"`
	Scheduled      int `json:"scheduled"`
}

// Count counts a project's requests by stage.
func (s *Service) Count(ctx context.Context, project string) (Counts, error) {
	q := s.store.Q(ctx)
	if _, err := q.Project(project); err != nil {
		return Counts{}, err
	}
	var c Counts
	for _, x := range []struct {
		n      *int
		states []string
	}{
		{&c.Total, nil}, {&c.Applied, []string{store.CRApplied}}, {&c.Approved, []string{store.CRApproved}},
		{&c.Rejected, []string{store.CRRejected}}, {&c.ReviewRequired, []string{store.CRInReview}}, {&c.Scheduled, []string{store.CRScheduled}},
	} {
		n, err := q.CountChangeRequests(store.ChangeRequestFilter{Project: project, States: x.states})
		if err != nil {
			return c, err
		}
		*x.n = n
	}
	return c, nil
}
