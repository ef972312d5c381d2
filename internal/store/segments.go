package store

import (
	"database/sql"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
)

const segmentColumns = `id, name, description, project, constraints, created_by, created_at`

func scanSegment(sc interface{ Scan(...any) error }) (Segment, error) {
	var (
		sg                       Segment
		desc, project, createdBy sql.NullString
		constraints              string
		created                  int64
	)
	if err := sc.Scan(&sg.ID, &sg.Name, &desc, &project, &constraints, &createdBy, &created); err != nil {
		return sg, err
	}
	sg.Description, sg.Project, sg.CreatedBy, sg.CreatedAt = strPtr(desc), strPtr(project), strPtr(createdBy), FromMillis(created)
	sg.Constraints = []engine.Constraint{}
	return sg, decodeJSON(constraints, &sg.Constraints)
}

// Segments lists every segment by id.
func (q Q) Segments() ([]Segment, error) {
	return collect(q, scanSegment, `SELECT `+segmentColumns+` FROM segments ORDER BY id`)
}

// Segment returns one segment or a NotFound error.
func (q Q) Segment(id int) (Segment, error) {
	sg, err := scanSegment(q.q.QueryRowContext(q.ctx, `SELECT `+segmentColumns+` FROM segments WHERE id = $1`, id))
	if err == sql.ErrNoRows {
		return sg, apierr.NotFound("No segment exists with ID \"%d\"", id)
	}
	return sg, q.s.translate(err)
}

// InsertSegment creates a segment and returns its id.
func (q Q) InsertSegment(sg Segment) (int, error) {
	var id int
	err := q.row([]any{&id}, `INSERT INTO segments (name, description, project, constraints, created_by, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		sg.Name, nullableText(sg.Description), nullableText(sg.Project), encodeJSON(nonNil(sg.Constraints)),
		nullableText(sg.CreatedBy), Millis(sg.CreatedAt))
	if apierr.IsKind(err, apierr.KindConflict) {
		return 0, apierr.Conflict("Segment name already exists")
	}
	if err == nil && q.tx != nil {
		q.tx.changed = true
	}
	return id, err
}

// UpdateSegment stores a segment's name, description, project and constraints.
func (q Q) UpdateSegment(sg Segment) error {
	n, err := q.exec(`UPDATE segments SET name = $2, description = $3, project = $4, constraints = $5 WHERE id = $1`,
		sg.ID, sg.Name, nullableText(sg.Description), nullableText(sg.Project), encodeJSON(nonNil(sg.Constraints)))
	if apierr.IsKind(err, apierr.KindConflict) {
		return apierr.Conflict("Segment name already exists")
	}
	if err == nil && n == 0 {
		return apierr.NotFound("No segment exists with ID \"%d\"", sg.ID)
	}
	return err
}

// SegmentInUse reports whether any strategy uses the segment.
func (q Q) SegmentInUse(id int) (bool, error) {
	var n int
	err := q.row([]any{&n}, `SELECT COUNT(*) FROM feature_strategy_segments WHERE segment_id = $1`, id)
	return n > 0, err
}

// DeleteSegment removes a segment.
func (q Q) DeleteSegment(id int) error {
	_, err := q.exec(`DELETE FROM segments WHERE id = $1`, id)
	return err
}
