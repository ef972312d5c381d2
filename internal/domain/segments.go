package domain

import (
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// SegmentInput is a segment as an admin call creates or replaces it.
type SegmentInput struct {
	Name        string            `json:"name"`
	Description *string           `json:"description"`
	Project     *string           `json:"project"`
	Constraints []ConstraintInput `json:"constraints"`
}

// maxSegmentValues caps the values of all a segment's constraints together.
const maxSegmentValues = 1000

func (b SegmentInput) validate(q store.Q) error {
	if b.Name == "" {
		return apierr.Validation("The `name` property is required. It was not present on the data you sent.")
	}
	if b.Constraints == nil {
		return apierr.Validation("The `constraints` property is required. It was not present on the data you sent.")
	}
	if err := ValidateConstraints("constraints", b.Constraints); err != nil {
		return err
	}
	values := 0
	for _, c := range b.Constraints {
		values += len(c.Values)
	}
	if values > maxSegmentValues {
		return apierr.Validation("A segment may hold at most %d values in its constraints.", maxSegmentValues)
	}
	if b.Project != nil && *b.Project != "" {
		if _, err := q.Project(*b.Project); err != nil {
			return apierr.Validation("The `project` property names a project that does not exist: %s.", *b.Project)
		}
	}
	return nil
}

// CreateSegment creates a segment as p, with its event.
func CreateSegment(tx *store.Tx, p *Principal, in SegmentInput) (store.Segment, error) {
	if err := p.Require(PermCreateSegment, "", ""); err != nil {
		return store.Segment{}, err
	}
	if err := in.validate(tx.Q); err != nil {
		return store.Segment{}, err
	}
	creator := p.Name
	sg := store.Segment{Name: in.Name, Description: in.Description, Project: in.Project, Constraints: EngineConstraints(in.Constraints), CreatedBy: &creator, CreatedAt: tx.Now()}
	id, err := tx.InsertSegment(sg)
	if err != nil {
		return store.Segment{}, err
	}
	sg.ID = id
	return sg, tx.Event(store.NewEvent{Type: "segment-created", Actor: p.Actor(), Project: deref(sg.Project), Data: sg})
}

// UpdateSegment replaces a segment's name, description, project and
// constraints as p, with its event.
func UpdateSegment(tx *store.Tx, p *Principal, id int, in SegmentInput) error {
	if err := p.Require(PermUpdateSegment, "", ""); err != nil {
		return err
	}
	old, err := tx.Segment(id)
	if err != nil {
		return err
	}
	if err := gateSegment(tx.Q, p, id, old.Project); err != nil {
		return err
	}
	if err := in.validate(tx.Q); err != nil {
		return err
	}
	sg := old
	sg.Name, sg.Description, sg.Project, sg.Constraints = in.Name, in.Description, in.Project, EngineConstraints(in.Constraints)
	if err := tx.UpdateSegment(sg); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "segment-updated", Actor: p.Actor(), Project: deref(sg.Project), Data: sg, PreData: old})
}

// DeleteSegment deletes a segment no strategy uses as p, with its event.
func DeleteSegment(tx *store.Tx, p *Principal, id int) error {
	if err := p.Require(PermDeleteSegment, "", ""); err != nil {
		return err
	}
	old, err := tx.Segment(id)
	if err != nil {
		return err
	}
	if err := gateSegment(tx.Q, p, id, old.Project); err != nil {
		return err
	}
	inUse, err := tx.SegmentInUse(id)
	if err != nil {
		return err
	}
	if inUse {
		return apierr.Conflict("Segment %d is used by at least one strategy; remove it from those strategies first.", id)
	}
	if err := tx.DeleteSegment(id); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "segment-deleted", Actor: p.Actor(), Project: deref(old.Project), PreData: old})
}
