package adminapi

import (
	"net/http"
	"slices"
	"strconv"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

func segmentID(r *http.Request) (int, error) {
	id, err := strconv.Atoi(r.PathValue("segmentId"))
	if err != nil {
		return 0, apierr.NotFound("No segment exists with ID %q", r.PathValue("segmentId"))
	}
	return id, nil
}

func (s *API) listSegments(w http.ResponseWriter, r *http.Request) error {
	segs, err := s.store.Q(r.Context()).Segments()
	if err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	segs = slices.DeleteFunc(segs, func(sg store.Segment) bool { return sg.Project != nil && !p.CanSeeProject(*sg.Project) })
	return httpjson.Write(w, http.StatusOK, map[string]any{"segments": segs})
}

func (s *API) getSegment(w http.ResponseWriter, r *http.Request) error {
	id, err := segmentID(r)
	if err != nil {
		return err
	}
	sg, err := s.store.Q(r.Context()).Segment(id)
	if err != nil {
		return err
	}
	if sg.Project != nil && !domain.PrincipalFrom(r.Context()).CanSeeProject(*sg.Project) {
		return apierr.NotFound("Could not find segment with id %d", id)
	}
	etag, err := domain.SegmentVersion(sg)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", etag)
	return httpjson.Write(w, http.StatusOK, sg)
}

func (s *API) createSegment(w http.ResponseWriter, r *http.Request) error {
	sg, err := apply(s, r, domain.CreateSegment)
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "segments/%s", strconv.Itoa(sg.ID))
	return httpjson.Write(w, http.StatusCreated, sg)
}

func (s *API) updateSegment(w http.ResponseWriter, r *http.Request) error {
	id, err := segmentID(r)
	if err != nil {
		return err
	}
	var body domain.SegmentInput
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	if err := s.change(w, r, func(tx *store.Tx) error { return domain.UpdateSegment(tx, p, id, body) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusNoContent)
}

func (s *API) deleteSegment(w http.ResponseWriter, r *http.Request) error {
	id, err := segmentID(r)
	if err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	if err := s.change(w, r, func(tx *store.Tx) error { return domain.DeleteSegment(tx, p, id) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusNoContent)
}
