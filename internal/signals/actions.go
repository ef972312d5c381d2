package signals

import (
	"net/http"
	"slices"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// Event types written by the action set handlers.
const (
	EventActionsCreated = "actions-created"
	EventActionsUpdated = "actions-updated"
	EventActionsDeleted = "actions-deleted"
)

// Action types.
const (
	ActionToggleOn       = "TOGGLE_FEATURE_ON"
	ActionToggleOff      = "TOGGLE_FEATURE_OFF"
	ActionToggleOnByTag  = "TOGGLE_FEATURES_ON_BY_TAG"
	ActionToggleOffByTag = "TOGGLE_FEATURES_OFF_BY_TAG"
)

// actionDefinition describes an action type for GET …/actions/config.
type actionDefinition struct {
	Label       string            `json:"label"`
	Description string            `json:"description"`
	Category    string            `json:"category"`
	Permissions []string          `json:"permissions"`
	Parameters  []actionParameter `json:"parameters"`
	enables     bool
	byTag       bool
}

type actionParameter struct {
	Name     string `json:"name"`
	Label    string `json:"label"`
	Type     string `json:"type"`
	Optional bool   `json:"optional,omitempty"`
}

func toggleDefinition(label, description string, enables, byTag bool) actionDefinition {
	target := actionParameter{Name: "featureName", Label: "Flag", Type: "select"}
	if byTag {
		target = actionParameter{Name: "tag", Label: "Tag (type:value)", Type: "select"}
	}
	return actionDefinition{
		Label: label, Description: description, Category: "Feature flags",
		Permissions: []string{domain.PermUpdateFeatureEnvironment},
		Parameters: []actionParameter{
			{Name: "project", Label: "Project", Type: "hidden"},
			{Name: "environment", Label: "Environment", Type: "select"},
			target,
		},
		enables: enables, byTag: byTag,
	}
}

// actionDefinitions are the action types an action set may use.
var actionDefinitions = map[string]actionDefinition{
	ActionToggleOn:       toggleDefinition("Enable flag", "Turns a flag on in an environment", true, false),
	ActionToggleOff:      toggleDefinition("Disable flag", "Turns a flag off in an environment", false, false),
	ActionToggleOnByTag:  toggleDefinition("Enable flags by tag", "Turns every flag of the project with a tag on in an environment", true, true),
	ActionToggleOffByTag: toggleDefinition("Disable flags by tag", "Turns every flag of the project with a tag off in an environment", false, true),
}

// operators are the constraint operators a payload filter may use (the
// engine's).
var operators = []string{
	"IN", "NOT_IN", "STR_STARTS_WITH", "STR_ENDS_WITH", "STR_CONTAINS",
	"NUM_EQ", "NUM_GT", "NUM_GTE", "NUM_LT", "NUM_LTE", "DATE_AFTER", "DATE_BEFORE",
	"SEMVER_EQ", "SEMVER_GT", "SEMVER_GTE", "SEMVER_LT", "SEMVER_LTE", "REGEX", "IN_CIDR",
}

// multiValueOperators take values; the others take value.
var multiValueOperators = []string{"IN", "NOT_IN", "STR_STARTS_WITH", "STR_ENDS_WITH", "STR_CONTAINS", "IN_CIDR"}

// ActionsConfig answers GET /api/admin/projects/{projectId}/actions/config.
func (s *Service) ActionsConfig(w http.ResponseWriter, r *http.Request) error {
	return httpjson.Write(w, http.StatusOK, actionDefinitions)
}

// actionSetBody is the create/update request of an action set.
type actionSetBody struct {
	Name        *string `json:"name"`
	Description *string `json:"description"`
	Enabled     *bool   `json:"enabled"`
	ActorID     *int64  `json:"actorId"`
	Match       *struct {
		Source   string                         `json:"source"`
		SourceID int64                          `json:"sourceId"`
		Payload  map[string]store.PayloadFilter `json:"payload"`
	} `json:"match"`
	Actions []struct {
		Action          string            `json:"action"`
		SortOrder       *int32            `json:"sortOrder"`
		ExecutionParams map[string]string `json:"executionParams"`
	} `json:"actions"`
}

// toActionSet validates the body's shape and limits and builds the set.
func (s *Service) toActionSet(b actionSetBody, project string, actor store.Actor) (store.ActionSet, error) {
	var a store.ActionSet
	switch {
	case b.Name == nil || strings.TrimSpace(*b.Name) == "":
		return a, apierr.Validation("The `name` property is required and must not be empty.")
	case len(*b.Name) > 255:
		return a, apierr.Validation("The `name` property must be at most 255 characters long.")
	case b.ActorID == nil || *b.ActorID < 1:
		return a, apierr.Validation("The `actorId` property is required: the id of the service account the actions run as.")
	case b.Match == nil:
		return a, apierr.Validation("The `match` property is required.")
	case b.Match.Source != store.SignalSourceEndpoint:
		return a, apierr.Validation("The `match.source` property must be %q; you sent %q.", store.SignalSourceEndpoint, b.Match.Source)
	case len(b.Actions) == 0:
		return a, apierr.Validation("The `actions` property must list at least one action.")
	case len(b.Actions) > s.cfg.ActionsLimit:
		return a, exceedsLimit("action set actions", s.cfg.ActionsLimit)
	case len(b.Match.Payload) > s.cfg.FiltersLimit:
		return a, exceedsLimit("action set filters", s.cfg.FiltersLimit)
	}
	for key, f := range b.Match.Payload {
		if err := s.validateFilter(key, f); err != nil {
			return a, err
		}
	}
	now := s.store.Now()
	a = store.ActionSet{Project: project, Name: strings.TrimSpace(*b.Name), Description: b.Description,
		Enabled: b.Enabled == nil || *b.Enabled, ActorID: *b.ActorID,
		Match:     store.ActionMatch{Source: b.Match.Source, SourceID: b.Match.SourceID, Payload: b.Match.Payload},
		CreatedAt: now, CreatedByUserID: actor.UserID}
	for i, ab := range b.Actions {
		def, ok := actionDefinitions[ab.Action]
		if !ok {
			return a, apierr.Validation("The `actions[%d].action` property must be one of %s; you sent %q.", i, strings.Join(actionNames(), ", "), ab.Action)
		}
		params := map[string]string{}
		for k, v := range ab.ExecutionParams {
			params[k] = v
		}
		if params["project"] == "" {
			params["project"] = project
		}
		if params["project"] != project {
			return a, apierr.Validation("The `actions[%d].executionParams.project` property must be the action set's project %q.", i, project)
		}
		for _, p := range def.Parameters {
			if !p.Optional && strings.TrimSpace(params[p.Name]) == "" {
				return a, apierr.Validation("The `actions[%d].executionParams.%s` property is required for %s.", i, p.Name, ab.Action)
			}
		}
		if def.byTag && !strings.Contains(params["tag"], ":") {
			return a, apierr.Validation("The `actions[%d].executionParams.tag` property must be written type:value.", i)
		}
		order := i + 1
		if ab.SortOrder != nil {
			order = int(*ab.SortOrder)
		}
		a.Actions = append(a.Actions, store.Action{Action: ab.Action, SortOrder: order, ExecutionParams: params,
			CreatedAt: now, CreatedByUserID: actor.UserID})
	}
	return a, nil
}

func actionNames() []string {
	names := make([]string, 0, len(actionDefinitions))
	for n := range actionDefinitions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func (s *Service) validateFilter(key string, f store.PayloadFilter) error {
	where := "match.payload." + key
	switch {
	case strings.TrimSpace(key) == "":
		return apierr.Validation("A `match.payload` filter needs a property name.")
	case !slices.Contains(operators, f.Operator):
		return apierr.Validation("The `%s.operator` property must be one of %s; you sent %q.", where, strings.Join(operators, ", "), f.Operator)
	case len(f.Values) > s.cfg.FilterValuesLimit:
		return exceedsLimit("action set filter values", s.cfg.FilterValuesLimit)
	case slices.Contains(multiValueOperators, f.Operator) && len(f.Values) == 0:
		return apierr.Validation("The `%s.values` property must list at least one value for %s.", where, f.Operator)
	case !slices.Contains(multiValueOperators, f.Operator) && f.Value == "":
		return apierr.Validation("The `%s.value` property is required for %s.", where, f.Operator)
	}
	return nil
}

// checkReferences verifies, in the transaction, what the set points to:
// its actor must be a service account and its source an existing endpoint.
func checkReferences(tx *store.Tx, a store.ActionSet) error {
	u, err := tx.User(a.ActorID)
	if apierr.IsKind(err, apierr.KindNotFound) || (err == nil && !u.IsService) {
		return apierr.Validation("The `actorId` property must be the id of a service account; %d is not one.", a.ActorID)
	}
	if err != nil {
		return err
	}
	_, err = tx.SignalEndpoint(a.Match.SourceID)
	if apierr.IsKind(err, apierr.KindNotFound) {
		return apierr.Validation("The `match.sourceId` property must be the id of a signal endpoint; %d is not one.", a.Match.SourceID)
	}
	return err
}

// ListActionSets answers GET /api/admin/projects/{projectId}/actions.
func (s *Service) ListActionSets(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	project := r.PathValue("projectId")
	if _, err := q.Project(project); err != nil {
		return err
	}
	sets, err := q.ActionSets(project)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"actions": sets})
}

// GetActionSet answers GET /api/admin/projects/{projectId}/actions/{id}.
func (s *Service) GetActionSet(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	a, err := s.store.Q(r.Context()).ActionSet(r.PathValue("projectId"), id)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, a)
}

// CreateActionSet answers POST /api/admin/projects/{projectId}/actions.
func (s *Service) CreateActionSet(w http.ResponseWriter, r *http.Request) error {
	project := r.PathValue("projectId")
	var body actionSetBody
	if err := httpjson.Decode(r, bodyLimit, &body); err != nil {
		return err
	}
	actor := actorOf(r)
	if _, err := s.store.Q(r.Context()).Project(project); err != nil {
		return err
	}
	a, err := s.toActionSet(body, project, actor)
	if err != nil {
		return err
	}
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if err := tx.LockForLimit(store.LimitKeyActionSets); err != nil {
			return err
		}
		n, err := tx.CountActionSets(project)
		if err != nil {
			return err
		}
		if n >= s.cfg.ActionSetsPerProjectLimit {
			return exceedsLimit("action set", s.cfg.ActionSetsPerProjectLimit)
		}
		if err := checkReferences(tx, a); err != nil {
			return err
		}
		if a.ID, err = tx.InsertActionSet(a); err != nil {
			return err
		}
		if a, err = tx.ActionSet(project, a.ID); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: EventActionsCreated, Actor: actor, Project: project, Data: a})
	})
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "api/admin/projects/%s/actions/%s", project, strconv.FormatInt(a.ID, 10))
	return httpjson.Write(w, http.StatusCreated, a)
}

// UpdateActionSet answers PUT /api/admin/projects/{projectId}/actions/{id}.
func (s *Service) UpdateActionSet(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	var body actionSetBody
	if err := httpjson.Decode(r, bodyLimit, &body); err != nil {
		return err
	}
	a, err := s.toActionSet(body, r.PathValue("projectId"), actorOf(r))
	if err != nil {
		return err
	}
	return s.changeActionSet(w, r, id, func(tx *store.Tx, old store.ActionSet) (store.ActionSet, error) {
		a.ID, a.CreatedAt, a.CreatedByUserID = old.ID, old.CreatedAt, old.CreatedByUserID
		if body.Enabled == nil {
			a.Enabled = old.Enabled
		}
		return a, checkReferences(tx, a)
	})
}

// EnableActionSet answers POST /api/admin/projects/{projectId}/actions/{id}/on.
func (s *Service) EnableActionSet(w http.ResponseWriter, r *http.Request) error {
	return s.setActionSetEnabled(w, r, true)
}

// DisableActionSet answers POST /api/admin/projects/{projectId}/actions/{id}/off.
func (s *Service) DisableActionSet(w http.ResponseWriter, r *http.Request) error {
	return s.setActionSetEnabled(w, r, false)
}

func (s *Service) setActionSetEnabled(w http.ResponseWriter, r *http.Request, enabled bool) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	return s.changeActionSet(w, r, id, func(_ *store.Tx, old store.ActionSet) (store.ActionSet, error) {
		a := old
		a.Enabled = enabled
		return a, nil
	})
}

// changeActionSet updates an action set in one transaction with its event
// and answers the stored set.
func (s *Service) changeActionSet(w http.ResponseWriter, r *http.Request, id int64,
	change func(*store.Tx, store.ActionSet) (store.ActionSet, error)) error {
	project, actor := r.PathValue("projectId"), actorOf(r)
	var updated store.ActionSet
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.ActionSet(project, id)
		if err != nil {
			return err
		}
		a, err := change(tx, old)
		if err != nil {
			return err
		}
		if err := tx.UpdateActionSet(a); err != nil {
			return err
		}
		if updated, err = tx.ActionSet(project, id); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: EventActionsUpdated, Actor: actor, Project: project, Data: updated, PreData: old})
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, updated)
}

// DeleteActionSet answers DELETE /api/admin/projects/{projectId}/actions/{id}.
func (s *Service) DeleteActionSet(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	project, actor := r.PathValue("projectId"), actorOf(r)
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.ActionSet(project, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteActionSet(id); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: EventActionsDeleted, Actor: actor, Project: project, PreData: old})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// ListActionSetEvents answers GET /api/admin/projects/{projectId}/actions/{id}/events:
// the set's runs, newest first.
func (s *Service) ListActionSetEvents(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "id")
	if err != nil {
		return err
	}
	limit, offset, err := paging(r, 50, 1000)
	if err != nil {
		return err
	}
	q := s.store.Q(r.Context())
	if _, err := q.ActionSet(r.PathValue("projectId"), id); err != nil {
		return err
	}
	events, err := q.ActionSetEvents(id, limit, offset)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"actionSetEvents": events})
}
