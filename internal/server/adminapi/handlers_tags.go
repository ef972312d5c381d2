package adminapi

import (
	"net/http"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

func (s *API) listTagTypes(w http.ResponseWriter, r *http.Request) error {
	types, err := s.store.Q(r.Context()).TagTypes()
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "tagTypes": types})
}

func (s *API) getTagType(w http.ResponseWriter, r *http.Request) error {
	t, err := s.store.Q(r.Context()).TagType(r.PathValue("name"))
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "tagType": t})
}

func (s *API) createTagType(w http.ResponseWriter, r *http.Request) error {
	t, err := apply(s, r, domain.CreateTagType)
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "tag-types/%s", t.Name)
	return httpjson.Write(w, http.StatusCreated, t)
}

func (s *API) updateTagType(w http.ResponseWriter, r *http.Request) error {
	var body domain.TagTypeInput
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	return s.changeTags(w, r, func(tx *store.Tx, p *domain.Principal) error {
		return domain.UpdateTagType(tx, p, r.PathValue("name"), body)
	})
}

func (s *API) deleteTagType(w http.ResponseWriter, r *http.Request) error {
	return s.changeTags(w, r, func(tx *store.Tx, p *domain.Principal) error {
		return domain.DeleteTagType(tx, p, r.PathValue("name"))
	})
}

// changeTags runs op in a transaction and answers 200.
func (s *API) changeTags(w http.ResponseWriter, r *http.Request, op func(tx *store.Tx, p *domain.Principal) error) error {
	p := domain.PrincipalFrom(r.Context())
	if err := s.change(w, r, func(tx *store.Tx) error { return op(tx, p) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *API) listTags(w http.ResponseWriter, r *http.Request) error {
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

func (s *API) createTag(w http.ResponseWriter, r *http.Request) error {
	var t store.Tag
	if err := httpjson.Decode(r, 0, &t); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	if err := s.store.Tx(r.Context(), func(tx *store.Tx) error { return domain.CreateTag(tx, p, t) }); err != nil {
		return err
	}
	httpjson.SetLocation(w, "tags/%s/%s", t.Type, t.Value)
	return httpjson.Write(w, http.StatusCreated, map[string]any{"version": 1, "tag": t})
}

func (s *API) deleteTag(w http.ResponseWriter, r *http.Request) error {
	t := store.Tag{Type: r.PathValue("type"), Value: r.PathValue("value")}
	return s.changeTags(w, r, func(tx *store.Tx, p *domain.Principal) error { return domain.DeleteTag(tx, p, t) })
}

func (s *API) listFeatureTags(w http.ResponseWriter, r *http.Request) error {
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

func (s *API) addFeatureTag(w http.ResponseWriter, r *http.Request) error {
	var t store.Tag
	if err := httpjson.Decode(r, 0, &t); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	if err := s.change(w, r, func(tx *store.Tx) error { return domain.TagFeature(tx, p, r.PathValue("featureName"), t) }); err != nil {
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

func (s *API) updateFeatureTags(w http.ResponseWriter, r *http.Request) error {
	var body featureTagsChange
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	name := r.PathValue("featureName")
	var tags []store.Tag
	err := s.change(w, r, func(tx *store.Tx) error {
		if err := domain.ChangeFeatureTags(tx, p, name, body.AddedTags, body.RemovedTags); err != nil {
			return err
		}
		var err error
		tags, err = tx.FeatureTags(name)
		return err
	})
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 1, "tags": tags})
}

func (s *API) removeFeatureTag(w http.ResponseWriter, r *http.Request) error {
	t := store.Tag{Type: r.PathValue("type"), Value: r.PathValue("value")}
	return s.changeTags(w, r, func(tx *store.Tx, p *domain.Principal) error {
		return domain.UntagFeature(tx, p, r.PathValue("featureName"), t)
	})
}
