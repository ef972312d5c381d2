package domain

import (
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// Event types written by the action set operations.
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

// ActionDefinition describes an action type (GET …/actions/config shows
// them); Enables and ByTag say what running it does.
type ActionDefinition struct {
	Label       string            `json:"label"`
	Description string            `json:"description"`
	Category    string            `json:"category"`
	Permissions []string          `json:"permissions"`
	Parameters  []ActionParameter `json:"parameters"`
	// Enables is true when the action turns flags on, false for off.
	Enables bool `json:"-"`
	// ByTag is true when the action names a tag (type:value) rather than
	// one flag.
	ByTag bool `json:"-"`
}

// ActionParameter is one execution parameter of an action type.
type ActionParameter struct {
	Name     string `json:"name"`
	Label    string `json:"label"`
	Type     string `json:"type"`
	Optional bool   `json:"optional,omitempty"`
}

func toggleDefinition(label, description string, enables, byTag bool) ActionDefinition {
	target := ActionParameter{Name: "featureName", Label: "Flag", Type: "select"}
	if byTag {
		target = ActionParameter{Name: "tag", Label: "Tag (type:value)", Type: "select"}
	}
	return ActionDefinition{
		Label: label, Description: description, Category: "Feature flags",
		Permissions: []string{PermUpdateFeatureEnvironment},
		Parameters: []ActionParameter{
			{Name: "project", Label: "Project", Type: "hidden"},
			{Name: "environment", Label: "Environment", Type: "select"},
			target,
		},
		Enables: enables, ByTag: byTag,
	}
}

// ActionDefinitions are the action types an action set may use.
var ActionDefinitions = map[string]ActionDefinition{
	ActionToggleOn:       toggleDefinition("Enable flag", "Turns a flag on in an environment", true, false),
	ActionToggleOff:      toggleDefinition("Disable flag", "Turns a flag off in an environment", false, false),
	ActionToggleOnByTag:  toggleDefinition("Enable flags by tag", "Turns every flag of the project with a tag on in an environment", true, true),
	ActionToggleOffByTag: toggleDefinition("Disable flags by tag", "Turns every flag of the project with a tag off in an environment", false, true),
}

// filterOperators are the constraint operators a payload filter may use
// (the engine's).
var filterOperators = []string{
	"IN", "NOT_IN", "STR_STARTS_WITH", "STR_ENDS_WITH", "STR_CONTAINS",
	"NUM_EQ", "NUM_GT", "NUM_GTE", "NUM_LT", "NUM_LTE", "DATE_AFTER", "DATE_BEFORE",
	"SEMVER_EQ", "SEMVER_GT", "SEMVER_GTE", "SEMVER_LT", "SEMVER_LTE", "REGEX", "IN_CIDR",
}

// ActionSetLimits bound action sets (signals.Config reads them as options).
type ActionSetLimits struct {
	// PerProject is the most action sets per project.
	PerProject int
	// Filters is the most payload filters per action set.
	Filters int
	// FilterValues is the most values per payload filter.
	FilterValues int
	// Actions is the most actions per action set.
	Actions int
}

// filterMultiValueOperators take values in a payload filter; the others
// take value.
var filterMultiValueOperators = []string{"IN", "NOT_IN", "STR_STARTS_WITH", "STR_ENDS_WITH", "STR_CONTAINS", "IN_CIDR"}

// ActionSetInput creates or replaces an action set. Enabled left out means
// enabled on creation and unchanged on update.
type ActionSetInput struct {
	Name        *string            `json:"name"`
	Description *string            `json:"description"`
	Enabled     *bool              `json:"enabled"`
	ActorID     *int64             `json:"actorId"`
	Match       *store.ActionMatch `json:"match"`
	Actions     []ActionInput      `json:"actions"`
}

// ActionInput is one action of an action set.
type ActionInput struct {
	Action          string            `json:"action"`
	SortOrder       *int32            `json:"sortOrder"`
	ExecutionParams map[string]string `json:"executionParams"`
}

// actionSet validates in's shape and limits and builds the set.
func (in ActionSetInput) actionSet(tx *store.Tx, p *Principal, project string, lim ActionSetLimits) (store.ActionSet, error) {
	var a store.ActionSet
	switch {
	case in.Name == nil || strings.TrimSpace(*in.Name) == "":
		return a, apierr.Validation("The `name` property is required and must not be empty.")
	case len(*in.Name) > 255:
		return a, apierr.Validation("The `name` property must be at most 255 characters long.")
	case in.ActorID == nil || *in.ActorID < 1:
		return a, apierr.Validation("The `actorId` property is required: the id of the service account the actions run as.")
	case in.Match == nil:
		return a, apierr.Validation("The `match` property is required.")
	case in.Match.Source != store.SignalSourceEndpoint:
		return a, apierr.Validation("The `match.source` property must be %q; you sent %q.", store.SignalSourceEndpoint, in.Match.Source)
	case len(in.Actions) == 0:
		return a, apierr.Validation("The `actions` property must list at least one action.")
	case len(in.Actions) > lim.Actions:
		return a, exceedsLimit("action set actions", lim.Actions)
	case len(in.Match.Payload) > lim.Filters:
		return a, exceedsLimit("action set filters", lim.Filters)
	}
	for key, f := range in.Match.Payload {
		if err := validateFilter(key, f, lim.FilterValues); err != nil {
			return a, err
		}
	}
	now, userID := tx.Now(), p.Actor().UserID
	a = store.ActionSet{Project: project, Name: strings.TrimSpace(*in.Name), Description: in.Description,
		Enabled: in.Enabled == nil || *in.Enabled, ActorID: *in.ActorID,
		Match:     *in.Match,
		CreatedAt: now, CreatedByUserID: userID}
	for i, ai := range in.Actions {
		def, ok := ActionDefinitions[ai.Action]
		if !ok {
			return a, apierr.Validation("The `actions[%d].action` property must be one of %s; you sent %q.", i, strings.Join(actionNames(), ", "), ai.Action)
		}
		params := map[string]string{}
		for k, v := range ai.ExecutionParams {
			params[k] = v
		}
		if params["project"] == "" {
			params["project"] = project
		}
		if params["project"] != project {
			return a, apierr.Validation("The `actions[%d].executionParams.project` property must be the action set's project %q.", i, project)
		}
		for _, param := range def.Parameters {
			if !param.Optional && strings.TrimSpace(params[param.Name]) == "" {
				return a, apierr.Validation("The `actions[%d].executionParams.%s` property is required for %s.", i, param.Name, ai.Action)
			}
		}
		if def.ByTag && !strings.Contains(params["tag"], ":") {
			return a, apierr.Validation("The `actions[%d].executionParams.tag` property must be written type:value.", i)
		}
		order := i + 1
		if ai.SortOrder != nil {
			order = int(*ai.SortOrder)
		}
		a.Actions = append(a.Actions, store.Action{Action: ai.Action, SortOrder: order, ExecutionParams: params,
			CreatedAt: now, CreatedByUserID: userID})
	}
	return a, nil
}

func actionNames() []string {
	names := make([]string, 0, len(ActionDefinitions))
	for n := range ActionDefinitions {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

func validateFilter(key string, f store.PayloadFilter, maxValues int) error {
	where := "match.payload." + key
	switch {
	case strings.TrimSpace(key) == "":
		return apierr.Validation("A `match.payload` filter needs a property name.")
	case !slices.Contains(filterOperators, f.Operator):
		return apierr.Validation("The `%s.operator` property must be one of %s; you sent %q.", where, strings.Join(filterOperators, ", "), f.Operator)
	case len(f.Values) > maxValues:
		return exceedsLimit("action set filter values", maxValues)
	case slices.Contains(filterMultiValueOperators, f.Operator) && len(f.Values) == 0:
		return apierr.Validation("The `%s.values` property must list at least one value for %s.", where, f.Operator)
	case !slices.Contains(filterMultiValueOperators, f.Operator) && f.Value == "":
		return apierr.Validation("The `%s.value` property is required for %s.", where, f.Operator)
	}
	return nil
}

// checkActionSetReferences verifies what the set points to: its actor must
// be a service account and its source an existing endpoint.
func checkActionSetReferences(tx *store.Tx, a store.ActionSet) error {
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

// CreateActionSet creates an action set in project as p (ADMIN), within
// lim, with its event, and returns it as stored.
func CreateActionSet(tx *store.Tx, p *Principal, project string, lim ActionSetLimits, in ActionSetInput) (store.ActionSet, error) {
	if err := p.Require(PermAdmin, project, ""); err != nil {
		return store.ActionSet{}, err
	}
	if _, err := tx.Project(project); err != nil {
		return store.ActionSet{}, err
	}
	a, err := in.actionSet(tx, p, project, lim)
	if err != nil {
		return a, err
	}
	if err := tx.LockForLimit(store.LimitKeyActionSets); err != nil {
		return a, err
	}
	n, err := tx.CountActionSets(project)
	if err != nil {
		return a, err
	}
	if n >= lim.PerProject {
		return a, exceedsLimit("action set", lim.PerProject)
	}
	if err := checkActionSetReferences(tx, a); err != nil {
		return a, err
	}
	if a.ID, err = tx.InsertActionSet(a); err != nil {
		return a, err
	}
	if a, err = tx.ActionSet(project, a.ID); err != nil {
		return a, err
	}
	return a, tx.Event(store.NewEvent{Type: EventActionsCreated, Actor: p.Actor(), Project: project, Data: a})
}

// UpdateActionSet replaces action set id of project as p (ADMIN), within
// lim, with its event; it keeps the set's creation and, when in leaves
// Enabled out, whether it is enabled.
func UpdateActionSet(tx *store.Tx, p *Principal, project string, id int64, lim ActionSetLimits, in ActionSetInput) (store.ActionSet, error) {
	if err := p.Require(PermAdmin, project, ""); err != nil {
		return store.ActionSet{}, err
	}
	a, err := in.actionSet(tx, p, project, lim)
	if err != nil {
		return a, err
	}
	return changeActionSet(tx, p, project, id, func(old store.ActionSet) (store.ActionSet, error) {
		a.ID, a.CreatedAt, a.CreatedByUserID = old.ID, old.CreatedAt, old.CreatedByUserID
		if in.Enabled == nil {
			a.Enabled = old.Enabled
		}
		return a, checkActionSetReferences(tx, a)
	})
}

// SetActionSetEnabled enables or disables action set id of project as p
// (ADMIN), with its event; the worker runs only enabled sets.
func SetActionSetEnabled(tx *store.Tx, p *Principal, project string, id int64, enabled bool) (store.ActionSet, error) {
	if err := p.Require(PermAdmin, project, ""); err != nil {
		return store.ActionSet{}, err
	}
	return changeActionSet(tx, p, project, id, func(old store.ActionSet) (store.ActionSet, error) {
		a := old
		a.Enabled = enabled
		return a, nil
	})
}

// changeActionSet stores change's result for an action set with its
// event and returns the set as stored.
func changeActionSet(tx *store.Tx, p *Principal, project string, id int64, change func(store.ActionSet) (store.ActionSet, error)) (store.ActionSet, error) {
	old, err := tx.ActionSet(project, id)
	if err != nil {
		return old, err
	}
	a, err := change(old)
	if err != nil {
		return a, err
	}
	if err := tx.UpdateActionSet(a); err != nil {
		return a, err
	}
	updated, err := tx.ActionSet(project, id)
	if err != nil {
		return updated, err
	}
	return updated, tx.Event(store.NewEvent{Type: EventActionsUpdated, Actor: p.Actor(), Project: project, Data: updated, PreData: old})
}

// DeleteActionSet deletes action set id of project as p (ADMIN), with its
// event.
func DeleteActionSet(tx *store.Tx, p *Principal, project string, id int64) error {
	if err := p.Require(PermAdmin, project, ""); err != nil {
		return err
	}
	old, err := tx.ActionSet(project, id)
	if err != nil {
		return err
	}
	if err := tx.DeleteActionSet(id); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: EventActionsDeleted, Actor: p.Actor(), Project: project, PreData: old})
}
