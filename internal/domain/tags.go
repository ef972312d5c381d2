package domain

import (
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// TagTypeInput is a tag type as an admin call creates or updates it;
// absent properties keep their values on update.
type TagTypeInput struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
	Icon        *string `json:"icon"`
	Color       *string `json:"color"`
}

// CreateTagType creates a tag type as p, with its event.
func CreateTagType(tx *store.Tx, p *Principal, in TagTypeInput) (store.TagType, error) {
	if err := p.Require(PermCreateTagType, "", ""); err != nil {
		return store.TagType{}, err
	}
	if err := CheckResourceName("name", in.Name); err != nil {
		return store.TagType{}, err
	}
	t := store.TagType(in)
	if err := tx.InsertTagType(t); err != nil {
		return store.TagType{}, err
	}
	return t, tx.Event(store.NewEvent{Type: "tag-type-created", Actor: p.Actor(), Data: t})
}

// UpdateTagType changes a tag type's description, icon and color as p,
// with its event.
func UpdateTagType(tx *store.Tx, p *Principal, name string, in TagTypeInput) error {
	if err := p.Require(PermUpdateTagType, "", ""); err != nil {
		return err
	}
	old, err := tx.TagType(name)
	if err != nil {
		return err
	}
	t := old
	if in.Description != nil {
		t.Description = in.Description
	}
	if in.Icon != nil {
		t.Icon = in.Icon
	}
	if in.Color != nil {
		t.Color = in.Color
	}
	if err := tx.UpdateTagType(t); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "tag-type-updated", Actor: p.Actor(), Data: t, PreData: old})
}

// DeleteTagType deletes a tag type as p, with its event.
func DeleteTagType(tx *store.Tx, p *Principal, name string) error {
	if err := p.Require(PermDeleteTagType, "", ""); err != nil {
		return err
	}
	old, err := tx.TagType(name)
	if err != nil {
		return err
	}
	if err := tx.DeleteTagType(name); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "tag-type-deleted", Actor: p.Actor(), PreData: old})
}

// CheckTag refuses a tag without a type or with an empty or over-long
// value.
func CheckTag(t store.Tag) error {
	if t.Type == "" {
		return apierr.Validation("The `type` property is required. It was not present on the data you sent.")
	}
	if v := strings.TrimSpace(t.Value); v == "" || len(v) > 100 {
		return apierr.Validation("The `value` property must be between 1 and 100 characters (without surrounding spaces). You provided %q.", t.Value)
	}
	return nil
}

// ensureTag creates the tag when it is new (writing tag-created); the tag
// type must exist.
func ensureTag(tx *store.Tx, actor store.Actor, t store.Tag) error {
	if _, err := tx.TagType(t.Type); apierr.IsKind(err, apierr.KindNotFound) {
		return apierr.Validation("Tag type '%s' does not exist", t.Type)
	} else if err != nil {
		return err
	}
	created, err := tx.InsertTag(t)
	if err != nil || !created {
		return err
	}
	return tx.Event(store.NewEvent{Type: "tag-created", Actor: actor, Data: t})
}

// CreateTag creates a tag (409 when it exists) as p, with its event.
func CreateTag(tx *store.Tx, p *Principal, t store.Tag) error {
	if err := p.Require(PermUpdateFeature, "", ""); err != nil {
		return err
	}
	if err := CheckTag(t); err != nil {
		return err
	}
	exists, err := tx.TagExists(t)
	if err != nil {
		return err
	}
	if exists {
		return apierr.Conflict("A tag of type %s with value %s already exists", t.Type, t.Value)
	}
	return ensureTag(tx, p.Actor(), t)
}

// DeleteTag deletes a tag as p, with an event when it existed.
func DeleteTag(tx *store.Tx, p *Principal, t store.Tag) error {
	if err := p.Require(PermUpdateFeature, "", ""); err != nil {
		return err
	}
	existed, err := tx.DeleteTag(t)
	if err != nil || !existed {
		return err
	}
	return tx.Event(store.NewEvent{Type: "tag-deleted", Actor: p.Actor(), Data: t})
}

// tagFeature links the flag to the tag (creating the tag when new) and
// writes feature-tagged for every add, as Unleash does.
func tagFeature(tx *store.Tx, p *Principal, f store.Feature, t store.Tag) error {
	if err := ensureTag(tx, p.Actor(), t); err != nil {
		return err
	}
	if _, err := tx.TagFeature(store.FeatureTag{FeatureName: f.Name, TagType: t.Type, TagValue: t.Value, CreatedByUserID: p.UserID}, tx.Now()); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "feature-tagged", Actor: p.Actor(), FeatureName: f.Name, Project: f.Project, Data: t})
}

func untagFeature(tx *store.Tx, p *Principal, f store.Feature, t store.Tag) error {
	removed, err := tx.UntagFeature(f.Name, t)
	if err != nil || !removed {
		return err
	}
	return tx.Event(store.NewEvent{Type: "feature-untagged", Actor: p.Actor(), FeatureName: f.Name, Project: f.Project, PreData: t})
}

// TagFeature tags a flag as p (creating the tag when new), with its
// events.
func TagFeature(tx *store.Tx, p *Principal, feature string, t store.Tag) error {
	return ChangeFeatureTags(tx, p, feature, []store.Tag{t}, nil)
}

// UntagFeature removes a tag from a flag as p, with an event when it had
// it.
func UntagFeature(tx *store.Tx, p *Principal, feature string, t store.Tag) error {
	f, err := p.RequireOnFlag(tx.Q, PermUpdateFeature, feature)
	if err != nil {
		return err
	}
	return untagFeature(tx, p, f, t)
}

// ChangeFeatureTags adds and removes a flag's tags as p, with their
// events, all or none.
func ChangeFeatureTags(tx *store.Tx, p *Principal, feature string, added, removed []store.Tag) error {
	f, err := p.RequireOnFlag(tx.Q, PermUpdateFeature, feature)
	if err != nil {
		return err
	}
	for _, list := range [][]store.Tag{added, removed} {
		for _, t := range list {
			if err := CheckTag(t); err != nil {
				return err
			}
		}
	}
	for _, t := range added {
		if err := tagFeature(tx, p, f, t); err != nil {
			return err
		}
	}
	for _, t := range removed {
		if err := untagFeature(tx, p, f, t); err != nil {
			return err
		}
	}
	return nil
}
