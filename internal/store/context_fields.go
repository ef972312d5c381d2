package store

import (
	"database/sql"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// LegalValue is one allowed value of a context field.
type LegalValue struct {
	Value       string `json:"value"`
	Description string `json:"description,omitempty"`
}

// ContextField is a field of the evaluation context that constraints may use.
type ContextField struct {
	Name        string       `json:"name"`
	Description *string      `json:"description"`
	Stickiness  bool         `json:"stickiness"`
	SortOrder   int          `json:"sortOrder"`
	LegalValues []LegalValue `json:"legalValues"`
	CreatedAt   time.Time    `json:"createdAt"`
}

const contextFieldColumns = `name, description, stickiness, sort_order, legal_values, created_at`

func scanContextField(sc interface{ Scan(...any) error }) (ContextField, error) {
	var (
		f       ContextField
		desc    sql.NullString
		legal   string
		created int64
	)
	if err := sc.Scan(&f.Name, &desc, &f.Stickiness, &f.SortOrder, &legal, &created); err != nil {
		return f, err
	}
	f.Description, f.CreatedAt, f.LegalValues = strPtr(desc), FromMillis(created), []LegalValue{}
	return f, decodeJSON(legal, &f.LegalValues)
}

// ContextFields lists the context fields by sort order and name.
func (q Q) ContextFields() ([]ContextField, error) {
	return collect(q, scanContextField, `SELECT `+contextFieldColumns+` FROM context_fields ORDER BY sort_order, name`)
}

// ContextField returns one context field or a NotFound error.
func (q Q) ContextField(name string) (ContextField, error) {
	f, err := scanContextField(q.q.QueryRowContext(q.ctx, `SELECT `+contextFieldColumns+` FROM context_fields WHERE name = $1`, name))
	if err == sql.ErrNoRows {
		return f, apierr.NotFound("Could not find context field with name %s", name)
	}
	return f, q.s.translate(err)
}

// InsertContextField creates a context field.
func (q Q) InsertContextField(f ContextField) error {
	_, err := q.exec(`INSERT INTO context_fields (`+contextFieldColumns+`) VALUES ($1, $2, $3, $4, $5, $6)`,
		f.Name, nullableText(f.Description), f.Stickiness, f.SortOrder, encodeJSON(nonNil(f.LegalValues)), Millis(f.CreatedAt))
	if apierr.IsKind(err, apierr.KindConflict) {
		return apierr.Conflict("A context field with that name already exist")
	}
	return err
}

// UpdateContextField stores a context field's description, stickiness,
// sort order and legal values.
func (q Q) UpdateContextField(f ContextField) error {
	_, err := q.exec(`UPDATE context_fields SET description = $2, stickiness = $3, sort_order = $4, legal_values = $5 WHERE name = $1`,
		f.Name, nullableText(f.Description), f.Stickiness, f.SortOrder, encodeJSON(nonNil(f.LegalValues)))
	return err
}

// DeleteContextField removes a context field.
func (q Q) DeleteContextField(name string) error {
	_, err := q.exec(`DELETE FROM context_fields WHERE name = $1`, name)
	return err
}
