package adminapi

import (
	"net/http"
	"slices"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

func (s *API) createFeature(w http.ResponseWriter, r *http.Request) error {
	created, err := apply(s, r, func(tx *store.Tx, p *domain.Principal, body domain.CreateFeatureInput) (store.Feature, error) {
		return domain.CreateFeature(tx, p, r.PathValue("projectId"), body)
	})
	if err != nil {
		return err
	}
	return s.respondFeature(w, r, http.StatusCreated, created.Name)
}

// respondFeature sends the flag's full view, with its version as the ETag
// (domain.FeatureVersion, for If-Match).
func (s *API) respondFeature(w http.ResponseWriter, r *http.Request, status int, name string) error {
	q := s.store.Q(r.Context())
	f, err := q.Feature(name)
	if err != nil {
		return err
	}
	v, err := domain.LoadFeatureView(q, f)
	if err != nil {
		return err
	}
	etag, err := domain.FeatureVersion(q, v)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag)
	return httpjson.Write(w, status, v)
}

func (s *API) getFeature(w http.ResponseWriter, r *http.Request) error {
	project, name := r.PathValue("projectId"), r.PathValue("featureName")
	f, err := s.store.Q(r.Context()).FeatureInProject(project, name)
	if err != nil {
		return err
	}
	if f.Archived {
		// As on Unleash: the archive lists archived flags, this path does not.
		return apierr.NotFound("There's no feature named \"%s\" in project \"%s\"; it is archived.", name, project)
	}
	return s.respondFeature(w, r, http.StatusOK, name)
}

func (s *API) listProjectFeatures(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	features, err := q.Features(r.PathValue("projectId"), false)
	if err != nil {
		return err
	}
	out := make([]domain.FeatureView, 0, len(features))
	for _, f := range features {
		v, err := domain.LoadFeatureView(q, f)
		if err != nil {
			return err
		}
		out = append(out, v)
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 2, "features": out})
}

func (s *API) updateFeature(w http.ResponseWriter, r *http.Request) error {
	var body domain.UpdateFeatureInput
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	return s.changeFeature(w, r, func(tx *store.Tx, p *domain.Principal, project, name string) error {
		return domain.UpdateFeature(tx, p, project, name, body)
	})
}

func (s *API) patchFeature(w http.ResponseWriter, r *http.Request) error {
	var ops []domain.PatchOp
	if err := httpjson.Decode(r, 0, &ops); err != nil {
		return err
	}
	return s.changeFeature(w, r, func(tx *store.Tx, p *domain.Principal, project, name string) error {
		return domain.PatchFeature(tx, p, project, name, ops)
	})
}

// changeFeature runs op on the path's flag in a transaction and answers
// with the flag.
func (s *API) changeFeature(w http.ResponseWriter, r *http.Request, op func(tx *store.Tx, p *domain.Principal, project, name string) error) error {
	project, name, p := r.PathValue("projectId"), r.PathValue("featureName"), domain.PrincipalFrom(r.Context())
	if err := s.change(w, r, func(tx *store.Tx) error { return op(tx, p, project, name) }); err != nil {
		return err
	}
	return s.respondFeature(w, r, http.StatusOK, name)
}

func (s *API) archiveFeature(w http.ResponseWriter, r *http.Request) error {
	project, name, p := r.PathValue("projectId"), r.PathValue("featureName"), domain.PrincipalFrom(r.Context())
	if err := s.change(w, r, func(tx *store.Tx) error { return domain.ArchiveFeature(tx, p, project, name) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusAccepted)
}

func (s *API) reviveFeature(w http.ResponseWriter, r *http.Request) error {
	name, p := r.PathValue("featureName"), domain.PrincipalFrom(r.Context())
	if err := s.change(w, r, func(tx *store.Tx) error { return domain.ReviveFeature(tx, p, name) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *API) deleteFeature(w http.ResponseWriter, r *http.Request) error {
	name, p := r.PathValue("featureName"), domain.PrincipalFrom(r.Context())
	if err := s.change(w, r, func(tx *store.Tx) error { return domain.DeleteFeature(tx, p, name) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

func (s *API) listArchivedFeatures(w http.ResponseWriter, r *http.Request) error {
	features, err := s.store.Q(r.Context()).Features(r.PathValue("projectId"), true)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 2, "features": features})
}

// cloneFeature copies a flag (domain.CloneFeature) and answers with the copy.
func (s *API) cloneFeature(w http.ResponseWriter, r *http.Request) error {
	var body domain.CloneFeatureInput
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	err := s.change(w, r, func(tx *store.Tx) error {
		_, err := domain.CloneFeature(tx, p, r.PathValue("projectId"), r.PathValue("featureName"), body)
		return err
	})
	if err != nil {
		return err
	}
	return s.respondFeature(w, r, http.StatusCreated, body.Name)
}

func (s *API) listAllArchivedFeatures(w http.ResponseWriter, r *http.Request) error {
	features, err := s.store.Q(r.Context()).Features("", true)
	if err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	features = slices.DeleteFunc(features, func(f store.Feature) bool { return !p.CanSeeProject(f.Project) })
	return httpjson.Write(w, http.StatusOK, map[string]any{"version": 2, "features": features})
}
