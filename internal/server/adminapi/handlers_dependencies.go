package adminapi

import (
	"net/http"
	"slices"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

func (s *API) addDependency(w http.ResponseWriter, r *http.Request) error {
	var body domain.DependencyInput
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	return s.changeDependencies(w, r, func(tx *store.Tx, p *domain.Principal, project, child string) error {
		return domain.AddDependency(tx, p, project, child, body)
	})
}

func (s *API) deleteDependency(w http.ResponseWriter, r *http.Request) error {
	return s.changeDependencies(w, r, func(tx *store.Tx, p *domain.Principal, project, child string) error {
		return domain.DeleteDependency(tx, p, project, child, r.PathValue("parent"))
	})
}

func (s *API) deleteDependencies(w http.ResponseWriter, r *http.Request) error {
	return s.changeDependencies(w, r, domain.DeleteDependencies)
}

// changeDependencies runs op on the path's flag in a transaction.
func (s *API) changeDependencies(w http.ResponseWriter, r *http.Request, op func(tx *store.Tx, p *domain.Principal, project, child string) error) error {
	project, child, p := r.PathValue("projectId"), r.PathValue("featureName"), domain.PrincipalFrom(r.Context())
	if err := s.change(w, r, func(tx *store.Tx) error { return op(tx, p, project, child) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}

// listParents answers which flags may become parents of a child: the
// active flags of the child's project other than the child itself and
// other than flags that already have a parent, sorted by name.
func (s *API) listParents(w http.ResponseWriter, r *http.Request) error {
	q := s.store.Q(r.Context())
	child, err := q.Feature(r.PathValue("featureName"))
	if apierr.IsKind(err, apierr.KindNotFound) {
		return httpjson.Write(w, http.StatusOK, []string{})
	}
	if err != nil {
		return err
	}
	features, err := q.Features(child.Project, false)
	if err != nil {
		return err
	}
	deps, err := q.Dependencies("")
	if err != nil {
		return err
	}
	hasParent := map[string]bool{}
	for _, d := range deps {
		hasParent[d.Child] = true
	}
	out := []string{}
	for _, f := range features {
		if f.Name != child.Name && !hasParent[f.Name] {
			out = append(out, f.Name)
		}
	}
	slices.Sort(out)
	return httpjson.Write(w, http.StatusOK, out)
}
