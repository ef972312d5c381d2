// Action sets, their actions and their execution log.

package store

import (
	"database/sql"
	"encoding/json"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// ActionSet reacts to matching signals by running its actions, in order,
// as its actor (a service account).
type ActionSet struct {
	ID              int64       `json:"id"`
	Project         string      `json:"project"`
	Name            string      `json:"name"`
	Description     *string     `json:"description"`
	Enabled         bool        `json:"enabled"`
	ActorID         int64       `json:"actorId"`
	Match           ActionMatch `json:"match"`
	Actions         []Action    `json:"actions"`
	CreatedAt       time.Time   `json:"createdAt"`
	CreatedByUserID *int64      `json:"createdByUserId"`
}

// ActionMatch says which signals trigger an action set: those of one
// source whose payload passes every filter.
type ActionMatch struct {
	Source   string                   `json:"source"`
	SourceID int64                    `json:"sourceId"`
	Payload  map[string]PayloadFilter `json:"payload"`
}

// PayloadFilter is a constraint over one top-level payload property.
type PayloadFilter struct {
	Operator        string   `json:"operator"`
	Values          []string `json:"values,omitempty"`
	Value           string   `json:"value,omitempty"`
	Inverted        bool     `json:"inverted"`
	CaseInsensitive bool     `json:"caseInsensitive"`
}

// Action is one step of an action set.
type Action struct {
	ID              int64             `json:"id"`
	Action          string            `json:"action"`
	SortOrder       int               `json:"sortOrder"`
	ExecutionParams map[string]string `json:"executionParams"`
	CreatedAt       time.Time         `json:"createdAt"`
	CreatedByUserID *int64            `json:"createdByUserId"`
}

const actionSetColumns = `id, project, name, description, enabled, actor_id, source, source_id, payload_filters, created_at, created_by_user_id`

func scanActionSet(sc interface{ Scan(...any) error }) (ActionSet, error) {
	var (
		a       ActionSet
		desc    sql.NullString
		filters string
		created int64
		by      sql.NullInt64
	)
	if err := sc.Scan(&a.ID, &a.Project, &a.Name, &desc, &a.Enabled, &a.ActorID, &a.Match.Source, &a.Match.SourceID,
		&filters, &created, &by); err != nil {
		return a, err
	}
	a.Description, a.CreatedAt, a.CreatedByUserID = strPtr(desc), FromMillis(created), int64Ptr(by)
	a.Match.Payload = map[string]PayloadFilter{}
	return a, decodeJSON(filters, &a.Match.Payload)
}

func (q Q) actionSetsWhere(cond string, args ...any) ([]ActionSet, error) {
	out, err := collect(q, scanActionSet, `SELECT `+actionSetColumns+` FROM action_sets WHERE `+cond+` ORDER BY id`, args...)
	if err != nil {
		return nil, err
	}
	for i := range out {
		if out[i].Actions, err = q.actions(out[i].ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// ActionSets lists a project's action sets by id.
func (q Q) ActionSets(project string) ([]ActionSet, error) {
	return q.actionSetsWhere(`project = $1`, project)
}

// EnabledActionSetsForSource lists the enabled action sets listening to an
// endpoint, by id.
func (q Q) EnabledActionSetsForSource(source string, sourceID int64) ([]ActionSet, error) {
	return q.actionSetsWhere(`enabled = $1 AND source = $2 AND source_id = $3`, true, source, sourceID)
}

// ActionSetNamesForSource lists the names of the action sets (enabled or
// not) that listen to an endpoint.
func (q Q) ActionSetNamesForSource(sourceID int64) ([]string, error) {
	return collect(q, scanString, `SELECT project || '/' || name FROM action_sets WHERE source_id = $1 ORDER BY id`, sourceID)
}

// ActionSet returns one action set of a project, or NotFound.
func (q Q) ActionSet(project string, id int64) (ActionSet, error) {
	sets, err := q.actionSetsWhere(`project = $1 AND id = $2`, project, id)
	if err != nil {
		return ActionSet{}, err
	}
	if len(sets) == 0 {
		return ActionSet{}, apierr.NotFound("Could not find action set %d in project %s", id, project)
	}
	return sets[0], nil
}

// CountActionSets counts a project's action sets.
func (q Q) CountActionSets(project string) (int, error) {
	var n int
	err := q.row([]any{&n}, `SELECT COUNT(*) FROM action_sets WHERE project = $1`, project)
	return n, err
}

func (q Q) actions(setID int64) ([]Action, error) {
	return collect(q, func(row scanner) (Action, error) {
		var (
			a       Action
			params  string
			created int64
			by      sql.NullInt64
		)
		if err := row.Scan(&a.ID, &a.Action, &a.SortOrder, &params, &created, &by); err != nil {
			return a, err
		}
		a.CreatedAt, a.CreatedByUserID = FromMillis(created), int64Ptr(by)
		a.ExecutionParams = map[string]string{}
		return a, decodeJSON(params, &a.ExecutionParams)
	}, `SELECT id, action, sort_order, execution_params, created_at, created_by_user_id
		FROM actions WHERE action_set_id = $1 ORDER BY sort_order, id`, setID)
}

// InsertActionSet creates an action set with its actions and returns its id.
func (q Q) InsertActionSet(a ActionSet) (int64, error) {
	id, err := q.insertID(`INSERT INTO action_sets (project, name, description, enabled, actor_id, source, source_id, payload_filters, created_at, created_by_user_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
		a.Project, a.Name, nullableText(a.Description), a.Enabled, a.ActorID, a.Match.Source, a.Match.SourceID,
		encodeJSON(nonNilFilters(a.Match.Payload)), Millis(a.CreatedAt), a.CreatedByUserID)
	if err != nil {
		return 0, err
	}
	return id, q.insertActions(id, a.Actions)
}

func nonNilFilters(m map[string]PayloadFilter) map[string]PayloadFilter {
	if m == nil {
		return map[string]PayloadFilter{}
	}
	return m
}

func (q Q) insertActions(setID int64, actions []Action) error {
	for _, ac := range actions {
		params := ac.ExecutionParams
		if params == nil {
			params = map[string]string{}
		}
		if _, err := q.exec(`INSERT INTO actions (action_set_id, action, sort_order, execution_params, created_at, created_by_user_id)
			VALUES ($1, $2, $3, $4, $5, $6)`, setID, ac.Action, ac.SortOrder, encodeJSON(params), Millis(ac.CreatedAt), ac.CreatedByUserID); err != nil {
			return err
		}
	}
	return nil
}

// UpdateActionSet replaces an action set's fields and actions.
func (q Q) UpdateActionSet(a ActionSet) error {
	n, err := q.exec(`UPDATE action_sets SET name = $2, description = $3, enabled = $4, actor_id = $5, source = $6, source_id = $7, payload_filters = $8
		WHERE id = $1`, a.ID, a.Name, nullableText(a.Description), a.Enabled, a.ActorID, a.Match.Source, a.Match.SourceID,
		encodeJSON(nonNilFilters(a.Match.Payload)))
	if err != nil {
		return err
	}
	if n == 0 {
		return apierr.NotFound("Could not find action set %d", a.ID)
	}
	if _, err := q.exec(`DELETE FROM actions WHERE action_set_id = $1`, a.ID); err != nil {
		return err
	}
	return q.insertActions(a.ID, a.Actions)
}

// DeleteActionSet removes an action set, its actions and its log.
func (q Q) DeleteActionSet(id int64) error {
	_, err := q.exec(`DELETE FROM action_sets WHERE id = $1`, id)
	return err
}

// ActionSetEvent is one run of an action set for one signal. ActionSet is
// the set as it was when the run started, each action with its state.
type ActionSetEvent struct {
	ID          int64           `json:"id"`
	ActionSetID int64           `json:"actionSetId"`
	SignalID    int64           `json:"signalId"`
	CreatedAt   time.Time       `json:"createdAt"`
	State       string          `json:"state"`
	Signal      json.RawMessage `json:"signal"`
	ActionSet   json.RawMessage `json:"actionSet"`
}

// InsertActionSetEvent records the start of a run and returns its id. Runs
// are a log, not a change, so they are written outside transactions.
func (q Q) InsertActionSetEvent(e ActionSetEvent) (int64, error) {
	return q.insertID(`INSERT INTO action_set_events (action_set_id, signal_id, state, signal, action_set, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`, e.ActionSetID, e.SignalID, e.State, string(e.Signal), string(e.ActionSet), Millis(e.CreatedAt))
}

// UpdateActionSetEvent stores a run's state and its actions' states.
func (q Q) UpdateActionSetEvent(id int64, state string, actionSet json.RawMessage) error {
	_, err := q.exec(`UPDATE action_set_events SET state = $2, action_set = $3 WHERE id = $1`, id, state, string(actionSet))
	return err
}

// ActionSetEvents lists an action set's runs, newest first.
func (q Q) ActionSetEvents(setID int64, limit, offset int) ([]ActionSetEvent, error) {
	return collect(q, func(row scanner) (ActionSetEvent, error) {
		var (
			e               ActionSetEvent
			signal, actions string
			created         int64
		)
		err := row.Scan(&e.ID, &e.ActionSetID, &e.SignalID, &e.State, &signal, &actions, &created)
		e.Signal, e.ActionSet, e.CreatedAt = json.RawMessage(signal), json.RawMessage(actions), FromMillis(created)
		return e, err
	}, `SELECT id, action_set_id, signal_id, state, signal, action_set, created_at FROM action_set_events
		WHERE action_set_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3`, setID, max(limit, 1), max(offset, 0))
}

// FeatureNamesByTag lists the names of a project's flags (not archived)
// that carry a tag, by name; the by-tag actions switch them.
func (q Q) FeatureNamesByTag(project, tagType, tagValue string) ([]string, error) {
	return collect(q, scanString, `SELECT f.name FROM features f JOIN feature_tags t ON t.feature_name = f.name
		WHERE f.project_id = $1 AND f.archived_at IS NULL AND t.tag_type = $2 AND t.tag_value = $3 ORDER BY f.name`,
		project, tagType, tagValue)
}
