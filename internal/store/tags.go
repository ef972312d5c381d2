package store

import (
	"database/sql"
	"time"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// TagType is a kind of tag (e.g. "simple").
type TagType struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
	Icon        *string `json:"icon"`
	Color       *string `json:"color"`
}

// Tag is a value of a tag type.
type Tag struct {
	Type  string `json:"type"`
	Value string `json:"value"`
}

// FeatureTag links a flag to a tag.
type FeatureTag struct {
	FeatureName     string `json:"featureName"`
	TagType         string `json:"tagType"`
	TagValue        string `json:"tagValue"`
	CreatedByUserID *int64 `json:"createdByUserId"`
}

// featureTagPairs loads every flag's tags for the client API's snapshot.
func featureTagPairs(q Q) (map[string][][2]string, error) {
	links, err := q.AllFeatureTags()
	if err != nil {
		return nil, err
	}
	return tagPairs(links), nil
}

// tagPairs groups tag links by flag as [type, value] pairs.
func tagPairs(links []FeatureTag) map[string][][2]string {
	out := map[string][][2]string{}
	for _, l := range links {
		out[l.FeatureName] = append(out[l.FeatureName], [2]string{l.TagType, l.TagValue})
	}
	return out
}

// featureTagsForEvent is the flag's current tags, copied into its events.
func featureTagsForEvent(q Q, feature string) (string, error) {
	tags, err := q.FeatureTags(feature)
	if err != nil {
		return "", err
	}
	return encodeJSON(tags), nil
}

// TagTypes lists every tag type by name.
func (q Q) TagTypes() ([]TagType, error) {
	return collect(q, scanTagType, `SELECT name, description, icon, color FROM tag_types ORDER BY name`)
}

func scanTagType(sc interface{ Scan(...any) error }) (TagType, error) {
	var t TagType
	var desc, icon, color sql.NullString
	err := sc.Scan(&t.Name, &desc, &icon, &color)
	t.Description, t.Icon, t.Color = strPtr(desc), strPtr(icon), strPtr(color)
	return t, err
}

// TagType returns one tag type or a NotFound error.
func (q Q) TagType(name string) (TagType, error) {
	t, err := scanTagType(q.q.QueryRowContext(q.ctx, `SELECT name, description, icon, color FROM tag_types WHERE name = $1`, name))
	if err == sql.ErrNoRows {
		return t, apierr.NotFound("Could not find tag type with name %s", name)
	}
	return t, q.s.translate(err)
}

// InsertTagType creates a tag type.
func (q Q) InsertTagType(t TagType) error {
	_, err := q.exec(`INSERT INTO tag_types (name, description, icon, color, created_at) VALUES ($1, $2, $3, $4, $5)`,
		t.Name, nullableText(t.Description), nullableText(t.Icon), nullableText(t.Color), q.now())
	if apierr.IsKind(err, apierr.KindConflict) {
		return apierr.Conflict("There already exists a tag-type with the name %s", t.Name)
	}
	return err
}

// UpdateTagType stores a tag type's description, icon and color.
func (q Q) UpdateTagType(t TagType) error {
	_, err := q.exec(`UPDATE tag_types SET description = $2, icon = $3, color = $4 WHERE name = $1`,
		t.Name, nullableText(t.Description), nullableText(t.Icon), nullableText(t.Color))
	return err
}

// DeleteTagType removes a tag type with its tags and their flag links.
func (q Q) DeleteTagType(name string) error {
	if _, err := q.exec(`DELETE FROM feature_tags WHERE tag_type = $1`, name); err != nil {
		return err
	}
	if _, err := q.exec(`DELETE FROM tags WHERE type = $1`, name); err != nil {
		return err
	}
	_, err := q.exec(`DELETE FROM tag_types WHERE name = $1`, name)
	return err
}

// Tags lists every tag, or those of one type when typ is not empty.
func (q Q) Tags(typ string) ([]Tag, error) {
	query, args := `SELECT type, value FROM tags`, []any{}
	if typ != "" {
		query, args = query+` WHERE type = $1`, append(args, typ)
	}
	return collect(q, scanTag, query+` ORDER BY type, value`, args...)
}

// scanTag reads a row of a tag's type and value.
func scanTag(row scanner) (Tag, error) {
	var t Tag
	err := row.Scan(&t.Type, &t.Value)
	return t, err
}

// TagExists reports whether the tag exists.
func (q Q) TagExists(t Tag) (bool, error) {
	var n int
	err := q.row([]any{&n}, `SELECT COUNT(*) FROM tags WHERE type = $1 AND value = $2`, t.Type, t.Value)
	return n > 0, err
}

// InsertTag creates a tag; created reports whether it was new.
func (q Q) InsertTag(t Tag) (created bool, err error) {
	n, err := q.exec(`INSERT INTO tags (type, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (type, value) DO NOTHING`,
		t.Type, t.Value, q.now())
	return n > 0, err
}

// DeleteTag removes a tag and its flag links; it reports whether it existed.
func (q Q) DeleteTag(t Tag) (bool, error) {
	if _, err := q.exec(`DELETE FROM feature_tags WHERE tag_type = $1 AND tag_value = $2`, t.Type, t.Value); err != nil {
		return false, err
	}
	n, err := q.exec(`DELETE FROM tags WHERE type = $1 AND value = $2`, t.Type, t.Value)
	return n > 0, err
}

// FeatureTags lists a flag's tags.
func (q Q) FeatureTags(feature string) ([]Tag, error) {
	return collect(q, scanTag, `SELECT tag_type, tag_value FROM feature_tags WHERE feature_name = $1 ORDER BY tag_type, tag_value`, feature)
}

// AllFeatureTags lists every flag-tag link.
func (q Q) AllFeatureTags() ([]FeatureTag, error) {
	return collect(q, scanFeatureTag, `SELECT feature_name, tag_type, tag_value, created_by_user_id FROM feature_tags ORDER BY feature_name, tag_type, tag_value`)
}

// scanFeatureTag reads a row of feature_name, tag_type, tag_value,
// created_by_user_id.
func scanFeatureTag(row scanner) (FeatureTag, error) {
	var ft FeatureTag
	var uid sql.NullInt64
	err := row.Scan(&ft.FeatureName, &ft.TagType, &ft.TagValue, &uid)
	if uid.Valid {
		v := uid.Int64
		ft.CreatedByUserID = &v
	}
	return ft, err
}

// TagFeature links a flag to an existing tag; added reports whether the link is new.
func (q Q) TagFeature(ft FeatureTag, at time.Time) (added bool, err error) {
	n, err := q.exec(`INSERT INTO feature_tags (feature_name, tag_type, tag_value, created_by_user_id, created_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (feature_name, tag_type, tag_value) DO NOTHING`,
		ft.FeatureName, ft.TagType, ft.TagValue, ft.CreatedByUserID, Millis(at))
	return n > 0, err
}

// UntagFeature removes a flag-tag link and reports whether it existed.
func (q Q) UntagFeature(feature string, t Tag) (bool, error) {
	n, err := q.exec(`DELETE FROM feature_tags WHERE feature_name = $1 AND tag_type = $2 AND tag_value = $3`, feature, t.Type, t.Value)
	return n > 0, err
}
