package changerequests

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// Change actions (Unleash's names).
const (
	ActionUpdateEnabled    = "updateEnabled"
	ActionAddStrategy      = "addStrategy"
	ActionUpdateStrategy   = "updateStrategy"
	ActionDeleteStrategy   = "deleteStrategy"
	ActionReorderStrategy  = "reorderStrategy"
	ActionPatchVariant     = "patchVariant"
	ActionArchiveFeature   = "archiveFeature"
	ActionAddDependency    = "addDependency"
	ActionDeleteDependency = "deleteDependency"
	ActionUpdateSegment    = "updateSegment"
	ActionDeleteSegment    = "deleteSegment"
)

// Payloads, as the matching admin routes take them. Unknown properties
// (such as the snapshot Unleash's UI sends) are ignored.
type (
	enabledPayload struct {
		Enabled                          *bool `json:"enabled"`
		ShouldActivateDisabledStrategies bool  `json:"shouldActivateDisabledStrategies"`
	}
	strategyPayload struct {
		ID string `json:"id"`
		domain.StrategyInput
	}
	strategyIDPayload struct {
		ID string `json:"id"`
	}
	variantsPayload struct {
		Variants []domain.VariantInput `json:"variants"`
	}
	dependencyPayload struct {
		Feature string `json:"feature"`
	}
	segmentPayload struct {
		ID int `json:"id"`
		domain.SegmentInput
	}
	segmentIDPayload struct {
		ID int `json:"id"`
	}
)

// action is what a change request does with one kind of change.
type action struct {
	// segment marks a segment's change (no flag).
	segment bool
	// run makes the change through the same domain operation as the
	// matching admin route.
	run func(tx *store.Tx, p *domain.Principal, cr store.ChangeRequest, c store.ChangeRequestChange) error
	// version is the version of what the change changes as q sees it
	// ("" when nothing is versioned).
	version func(q store.Q, cr store.ChangeRequest, c store.ChangeRequestChange) (string, error)
}

var actions = map[string]action{
	ActionUpdateEnabled: {run: func(tx *store.Tx, p *domain.Principal, cr store.ChangeRequest, c store.ChangeRequestChange) error {
		var in enabledPayload
		if err := decodePayload(c.Payload, &in); err != nil {
			return err
		}
		if in.Enabled == nil {
			return apierr.Validation("The `payload.enabled` property is required: true to turn the flag on, false to turn it off.")
		}
		_, _, err := domain.SetEnabled(tx, p, cr.Project, c.Feature, cr.Environment, *in.Enabled, in.ShouldActivateDisabledStrategies)
		return err
	}},
	ActionAddStrategy: {run: func(tx *store.Tx, p *domain.Principal, cr store.ChangeRequest, c store.ChangeRequestChange) error {
		var in domain.StrategyInput
		if err := decodePayload(c.Payload, &in); err != nil {
			return err
		}
		_, err := domain.AddStrategy(tx, p, cr.Project, c.Feature, cr.Environment, in)
		return err
	}},
	ActionUpdateStrategy: {
		run: func(tx *store.Tx, p *domain.Principal, cr store.ChangeRequest, c store.ChangeRequestChange) error {
			var in strategyPayload
			if err := decodePayload(c.Payload, &in); err != nil {
				return err
			}
			_, err := domain.UpdateStrategy(tx, p, cr.Project, c.Feature, cr.Environment, in.ID, in.StrategyInput)
			return err
		},
		version: strategyVersion,
	},
	ActionDeleteStrategy: {
		run: func(tx *store.Tx, p *domain.Principal, cr store.ChangeRequest, c store.ChangeRequestChange) error {
			id, err := payloadStrategyID(c.Payload)
			if err != nil {
				return err
			}
			return domain.DeleteStrategy(tx, p, cr.Project, c.Feature, cr.Environment, id)
		},
		version: strategyVersion,
	},
	ActionReorderStrategy: {
		run: func(tx *store.Tx, p *domain.Principal, cr store.ChangeRequest, c store.ChangeRequestChange) error {
			var in []domain.StrategyOrder
			if err := decodePayload(c.Payload, &in); err != nil {
				return err
			}
			return domain.ReorderStrategies(tx, p, cr.Project, c.Feature, cr.Environment, in)
		},
		version: func(q store.Q, cr store.ChangeRequest, c store.ChangeRequestChange) (string, error) {
			sts, err := q.Strategies(c.Feature, cr.Environment)
			if err != nil {
				return "", err
			}
			return domain.ValueVersion(store.SortedIDs(sts))
		},
	},
	ActionPatchVariant: {
		run: func(tx *store.Tx, p *domain.Principal, cr store.ChangeRequest, c store.ChangeRequestChange) error {
			var in variantsPayload
			if err := decodePayload(c.Payload, &in); err != nil {
				return err
			}
			if in.Variants == nil {
				return apierr.Validation("The `payload.variants` property is required: the flag's variants in this environment (an empty list removes them).")
			}
			_, err := domain.SetVariants(tx, p, cr.Project, c.Feature, cr.Environment, in.Variants)
			return err
		},
		version: func(q store.Q, cr store.ChangeRequest, c store.ChangeRequestChange) (string, error) {
			fe, err := domain.LoadFeatureEnv(q, cr.Project, c.Feature, cr.Environment, true)
			if err != nil {
				return "", err
			}
			return domain.ValueVersion(domain.NonNil(fe.FE.Variants))
		},
	},
	ActionArchiveFeature: {run: func(tx *store.Tx, p *domain.Principal, cr store.ChangeRequest, c store.ChangeRequestChange) error {
		return domain.ArchiveFeature(tx, p, cr.Project, c.Feature)
	}},
	ActionAddDependency: {
		run: func(tx *store.Tx, p *domain.Principal, cr store.ChangeRequest, c store.ChangeRequestChange) error {
			var in domain.DependencyInput
			if err := decodePayload(c.Payload, &in); err != nil {
				return err
			}
			return domain.AddDependency(tx, p, cr.Project, c.Feature, in)
		},
		version: dependenciesVersion,
	},
	ActionDeleteDependency: {
		run: func(tx *store.Tx, p *domain.Principal, cr store.ChangeRequest, c store.ChangeRequestChange) error {
			var in dependencyPayload
			if len(c.Payload) > 0 && string(c.Payload) != "null" {
				if err := decodePayload(c.Payload, &in); err != nil {
					return err
				}
			}
			if in.Feature == "" {
				return domain.DeleteDependencies(tx, p, cr.Project, c.Feature)
			}
			return domain.DeleteDependency(tx, p, cr.Project, c.Feature, in.Feature)
		},
		version: dependenciesVersion,
	},
	ActionUpdateSegment: {
		segment: true,
		run: func(tx *store.Tx, p *domain.Principal, cr store.ChangeRequest, c store.ChangeRequestChange) error {
			var in segmentPayload
			if err := decodePayload(c.Payload, &in); err != nil {
				return err
			}
			return domain.UpdateSegment(tx, p, c.SegmentID, in.SegmentInput)
		},
		version: segmentVersion,
	},
	ActionDeleteSegment: {
		segment: true,
		run: func(tx *store.Tx, p *domain.Principal, cr store.ChangeRequest, c store.ChangeRequestChange) error {
			return domain.DeleteSegment(tx, p, c.SegmentID)
		},
		version: segmentVersion,
	},
}

// actionNames lists the actions, for error messages.
func actionNames() string {
	names := make([]string, 0, len(actions))
	for n := range actions {
		names = append(names, n)
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// decodePayload decodes a change's payload (400 naming the payload's
// property).
func decodePayload(raw json.RawMessage, dst any) error {
	if len(raw) == 0 || string(raw) == "null" {
		return apierr.Validation("The `payload` property is required for this action.")
	}
	err := httpjson.Unmarshal(raw, dst)
	if e, ok := err.(*apierr.Error); ok {
		e.Message = strings.Replace(e.Message, "The `", "The `payload.", 1)
		e.Message = strings.Replace(e.Message, "The request body", "The `payload` property", 1)
	}
	return err
}

// payloadStrategyID reads the strategy id of an update or a deletion.
func payloadStrategyID(raw json.RawMessage) (string, error) {
	var in strategyIDPayload
	if err := decodePayload(raw, &in); err != nil {
		return "", err
	}
	if in.ID == "" {
		return "", apierr.Validation("The `payload.id` property is required: the id of the strategy to change.")
	}
	return in.ID, nil
}

// payloadSegmentID reads the segment id of a segment's change.
func payloadSegmentID(raw json.RawMessage) (int, error) {
	var in segmentIDPayload
	if err := decodePayload(raw, &in); err != nil {
		return 0, err
	}
	if in.ID < 1 {
		return 0, apierr.Validation("The `payload.id` property is required: the id of the segment to change.")
	}
	return in.ID, nil
}

func strategyVersion(q store.Q, cr store.ChangeRequest, c store.ChangeRequestChange) (string, error) {
	id, err := payloadStrategyID(c.Payload)
	if err != nil {
		return "", err
	}
	fe, err := domain.LoadFeatureEnv(q, cr.Project, c.Feature, cr.Environment, true)
	if err != nil {
		return "", err
	}
	st, err := domain.StrategyIn(q, fe, id)
	if err != nil {
		return "", err
	}
	return domain.ValueVersion(st)
}

func dependenciesVersion(q store.Q, _ store.ChangeRequest, c store.ChangeRequestChange) (string, error) {
	deps, err := q.Dependencies(c.Feature)
	if err != nil {
		return "", err
	}
	return domain.ValueVersion(deps)
}

func segmentVersion(q store.Q, _ store.ChangeRequest, c store.ChangeRequestChange) (string, error) {
	sg, err := q.Segment(c.SegmentID)
	if err != nil {
		return "", err
	}
	return domain.SegmentVersion(sg)
}

// conflict says why change c no longer applies as drafted ("" when it
// does): the flag is gone or archived, or what it changes changed since.
func conflict(q store.Q, cr store.ChangeRequest, c store.ChangeRequestChange) (string, error) {
	a := actions[c.Action]
	if !a.segment {
		f, err := q.Feature(c.Feature)
		switch {
		case apierr.IsKind(err, apierr.KindNotFound):
			return fmt.Sprintf("Flag %s was deleted since this change was drafted.", c.Feature), nil
		case err != nil:
			return "", err
		case f.Archived:
			return fmt.Sprintf("Flag %s was archived since this change was drafted.", c.Feature), nil
		case f.Project != cr.Project:
			return fmt.Sprintf("Flag %s moved to project %s since this change was drafted.", c.Feature, f.Project), nil
		}
	}
	if a.version == nil || c.Version == "" {
		return "", nil
	}
	current, err := a.version(q, cr, c)
	if apierr.IsKind(err, apierr.KindNotFound) {
		return gone(cr, c), nil
	}
	if err != nil || current == c.Version {
		return "", err
	}
	return changed(q, cr, c), nil
}

// gone says that what a change changes was deleted.
func gone(cr store.ChangeRequest, c store.ChangeRequestChange) string {
	switch c.Action {
	case ActionUpdateSegment, ActionDeleteSegment:
		return fmt.Sprintf("Segment %d was deleted since this change was drafted.", c.SegmentID)
	default:
		id, _ := payloadStrategyID(c.Payload)
		return fmt.Sprintf("Strategy %s of flag %s in %s was deleted since this change was drafted.", id, c.Feature, cr.Environment)
	}
}

// changed says that what a change changes was changed since, and by whom.
func changed(q store.Q, cr store.ChangeRequest, c store.ChangeRequestChange) string {
	var what string
	switch c.Action {
	case ActionUpdateStrategy, ActionDeleteStrategy:
		id, _ := payloadStrategyID(c.Payload)
		what = fmt.Sprintf("Strategy %s of flag %s in %s was changed", id, c.Feature, cr.Environment)
	case ActionReorderStrategy:
		what = fmt.Sprintf("The strategies of flag %s in %s were added, removed or reordered", c.Feature, cr.Environment)
	case ActionPatchVariant:
		what = fmt.Sprintf("The variants of flag %s in %s were changed", c.Feature, cr.Environment)
	case ActionAddDependency, ActionDeleteDependency:
		what = fmt.Sprintf("The dependencies of flag %s were changed", c.Feature)
	default:
		what = fmt.Sprintf("Segment %d was changed", c.SegmentID)
	}
	by := ""
	if c.Feature != "" {
		if name, err := q.LastFeatureChangeBy(c.Feature); err == nil && name != "" {
			by = " (last by " + name + ")"
		}
	}
	return what + " since this change was drafted" + by + ". Edit the change against the current configuration, or discard it."
}
