package server

import (
	"net/http"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// tagTypeBody is the body of tag-type create and update.
type tagTypeBody struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
	Icon        *string `json:"icon"`
	Color       *string `json:"color"`
}

func (s *Server) listTagTypes(w http.ResponseWriter, r *http.Request) error {
	types, err := s.store.Q(r.Context()).TagTypes()
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "tagTypes": types})
}

func (s *Server) getTagType(w http.ResponseWriter, r *http.Request) error {
	t, err := s.store.Q(r.Context()).TagType(r.PathValue("name"))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "tagType": t})
}

func (s *Server) createTagType(w http.ResponseWriter, r *http.Request) error {
	var body tagTypeBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	if err := checkResourceName("name", body.Name); err != nil {
		return err
	}
	t := store.TagType(body)
	p := domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if err := tx.InsertTagType(t); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "tag-type-created", Actor: p.Actor(), Data: t})
	})
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "tag-types/%s", t.Name)
	return httpjson.Write(w, http.StatusCreated, t)
}

func (s *Server) updateTagType(w http.ResponseWriter, r *http.Request) error {
	var body tagTypeBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	name := r.PathValue("name")
	p := domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.TagType(name)
		if err != nil {
			return err
		}
		t := old
		if body.Description != nil {
			t.Description = body.Description
		}
		if body.Icon != nil {
			t.Icon = body.Icon
		}
		if body.Color != nil {
			t.Color = body.Color
		}
		if err := tx.UpdateTagType(t); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "tag-type-updated", Actor: p.Actor(), Data: t, PreData: old})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *Server) deleteTagType(w http.ResponseWriter, r *http.Request) error {
	name := r.PathValue("name")
	p := domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.TagType(name)
		if err != nil {
			return err
		}
		if err := tx.DeleteTagType(name); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "tag-type-deleted", Actor: p.Actor(), PreData: old})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *Server) listTags(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	typ := r.PathValue("type")
	if typ != "" {
		if _, err := q.TagType(typ); err != nil {
			return err
		}
	}
	tags, err := q.Tags(typ)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "tags": tags})
}

// decodeTag reads and checks a {type, value} body.
func decodeTag(r *http.Request) (store.Tag, error) {
	var t store.Tag
	if err := httpjson.Decode(r, 0, &t); err != nil {
		return t, err
	}
	return t, checkTag(t)
}

func checkTag(t store.Tag) error {
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

func (s *Server) createTag(w http.ResponseWriter, r *http.Request) error {
	t, err := decodeTag(r)
	if err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		exists, err := tx.TagExists(t)
		if err != nil {
			return err
		}
		if exists {
			return apierr.Conflict("A tag of type %s with value %s already exists", t.Type, t.Value)
		}
		return ensureTag(tx, p.Actor(), t)
	})
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "tags/%s/%s", t.Type, t.Value)
	return httpjson.Write(w, http.StatusCreated, map[string]any{"version": 1, "tag": t})
}

func (s *Server) deleteTag(w http.ResponseWriter, r *http.Request) error {
	t := store.Tag{Type: r.PathValue("type"), Value: r.PathValue("value")}
	p := domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		existed, err := tx.DeleteTag(t)
		if err != nil || !existed {
			return err
		}
		return tx.Event(store.NewEvent{Type: "tag-deleted", Actor: p.Actor(), Data: t})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *Server) listFeatureTags(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	name := r.PathValue("featureName")
	if _, err := q.Feature(name); err != nil {
		return err
	}
	tags, err := q.FeatureTags(name)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "tags": tags})
}

// tagFeature links the flag to the tag (creating the tag when new) and
// writes feature-tagged for every add, as Unleash does.
func tagFeature(tx *store.Tx, p *domain.Principal, f store.Feature, t store.Tag) error {
	if err := ensureTag(tx, p.Actor(), t); err != nil {
		return err
	}
	if _, err := tx.TagFeature(store.FeatureTag{FeatureName: f.Name, TagType: t.Type, TagValue: t.Value, CreatedByUserID: p.UserID}, tx.Now()); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "feature-tagged", Actor: p.Actor(), FeatureName: f.Name, Project: f.Project, Data: t})
}

func untagFeature(tx *store.Tx, p *domain.Principal, f store.Feature, t store.Tag) error {
	removed, err := tx.UntagFeature(f.Name, t)
	if err != nil || !removed {
		return err
	}
	return tx.Event(store.NewEvent{Type: "feature-untagged", Actor: p.Actor(), FeatureName: f.Name, Project: f.Project, PreData: t})
}

func (s *Server) addFeatureTag(w http.ResponseWriter, r *http.Request) error {
	t, err := decodeTag(r)
	if err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		f, err := tx.Feature(r.PathValue("featureName"))
		if err != nil {
			return err
		}
		return tagFeature(tx, p, f, t)
	})
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "%s/tags", r.PathValue("featureName"))
	return httpjson.Write(w, http.StatusCreated, t)
}

// featureTagsChange is the body of PUT /api/admin/features/:name/tags.
type featureTagsChange struct {
	AddedTags   []store.Tag `json:"addedTags"`
	RemovedTags []store.Tag `json:"removedTags"`
}

func (s *Server) updateFeatureTags(w http.ResponseWriter, r *http.Request) error {
	var body featureTagsChange
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	for _, t := range append(append([]store.Tag{}, body.AddedTags...), body.RemovedTags...) {
		if err := checkTag(t); err != nil {
			return err
		}
	}
	p := domain.PrincipalFrom(r.Context())
	var tags []store.Tag
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		f, err := tx.Feature(r.PathValue("featureName"))
		if err != nil {
			return err
		}
		for _, t := range body.AddedTags {
			if err := tagFeature(tx, p, f, t); err != nil {
				return err
			}
		}
		for _, t := range body.RemovedTags {
			if err := untagFeature(tx, p, f, t); err != nil {
				return err
			}
		}
		tags, err = tx.FeatureTags(f.Name)
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "tags": tags})
}

func (s *Server) removeFeatureTag(w http.ResponseWriter, r *http.Request) error {
	t := store.Tag{Type: r.PathValue("type"), Value: r.PathValue("value")}
	p := domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		f, err := tx.Feature(r.PathValue("featureName"))
		if err != nil {
			return err
		}
		return untagFeature(tx, p, f, t)
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}
