package adminapi

import (
	"net/http"
	"strconv"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// change runs fn, a change to the flag ({featureName}) or segment
// ({segmentId}) of the request's path, in a store transaction. With an
// If-Match header the change is conditional: domain.CheckVersion runs
// first in the same transaction and answers 412 when someone changed the
// object since the caller read the version it sends, and the answer's ETag
// is the object's version after the change, for the caller's next one.
// Without If-Match nothing is checked and nothing is added, as on Unleash.
func (s *API) change(w http.ResponseWriter, r *http.Request, fn func(tx *store.Tx) error) error {
	obj, ok := versionedObject(r)
	if !ok {
		return s.store.Tx(r.Context(), fn)
	}
	m, err := domain.ParseIfMatch(r.Header.Get("If-Match"))
	if err != nil {
		return err
	}
	if m == nil {
		return s.store.Tx(r.Context(), fn)
	}
	var version string
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if err := domain.CheckVersion(tx, obj, *m); err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return err
		}
		var err error
		version, err = domain.CurrentVersion(tx.Q, obj)
		return err
	})
	if err == nil && version != "" {
		w.Header().Set("ETag", version)
	}
	return err
}

// versionedObject is the flag or segment that the request's path names.
func versionedObject(r *http.Request) (domain.Versioned, bool) {
	if name := r.PathValue("featureName"); name != "" {
		return domain.Versioned{Feature: name}, true
	}
	if id, err := strconv.Atoi(r.PathValue("segmentId")); err == nil {
		return domain.Versioned{Segment: id}, true
	}
	return domain.Versioned{}, false
}
