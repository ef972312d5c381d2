package server

import (
	"net/http"
	"strconv"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// segmentBody is the body of segment create and update.
type segmentBody struct {
	Name        string                   `json:"name"`
	Description *string                  `json:"description"`
	Project     *string                  `json:"project"`
	Constraints []domain.ConstraintInput `json:"constraints"`
}

const maxSegmentValues = 1000

func (b segmentBody) validate(q store.Q) error {
	if b.Name == "" {
		return apierr.Validation("The `name` property is required. It was not present on the data you sent.")
	}
	if b.Constraints == nil {
		return apierr.Validation("The `constraints` property is required. It was not present on the data you sent.")
	}
	if err := domain.ValidateConstraints("constraints", b.Constraints); err != nil {
		return err
	}
	values := 0
	for _, c := range b.Constraints {
		values += len(c.Values)
	}
	if values > maxSegmentValues {
		return apierr.Validation("A segment may hold at most %d values in its constraints.", maxSegmentValues)
	}
	if b.Project != nil && *b.Project != "" {
		if _, err := q.Project(*b.Project); err != nil {
			return apierr.Validation("The `project` property names a project that does not exist: %s.", *b.Project)
		}
	}
	return nil
}

func segmentID(r *http.Request) (int, error) {
	id, err := strconv.Atoi(r.PathValue("segmentId"))
	if err != nil {
		return 0, apierr.NotFound("No segment exists with ID %q", r.PathValue("segmentId"))
	}
	return id, nil
}

func (s *Server) listSegments(w http.ResponseWriter, r *http.Request) error {
	segs, err := s.store.Q(r.Context()).Segments()
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, map[string]any{"segments": segs})
}

func (s *Server) getSegment(w http.ResponseWriter, r *http.Request) error {
	id, err := segmentID(r)
	if err != nil {
		return err
	}
	sg, err := s.store.Q(r.Context()).Segment(id)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, sg)
}

func projectOf(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func (s *Server) createSegment(w http.ResponseWriter, r *http.Request) error {
	var body segmentBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	var sg store.Segment
	err := s.store.Tx(r.Context(), func(tx *store.Tx) error {
		if err := body.validate(tx.Q); err != nil {
			return err
		}
		creator := p.Name
		sg = store.Segment{Name: body.Name, Description: body.Description, Project: body.Project, Constraints: domain.EngineConstraints(body.Constraints), CreatedBy: &creator, CreatedAt: tx.Now()}
		id, err := tx.InsertSegment(sg)
		if err != nil {
			return err
		}
		sg.ID = id
		return tx.Event(store.NewEvent{Type: "segment-created", Actor: p.Actor(), Project: projectOf(sg.Project), Data: sg})
	})
	if err != nil {
		return err
	}
	httpjson.SetLocation(w, "segments/%s", strconv.Itoa(sg.ID))
	return httpjson.Write(w, http.StatusCreated, sg)
}

func (s *Server) updateSegment(w http.ResponseWriter, r *http.Request) error {
	id, err := segmentID(r)
	if err != nil {
		return err
	}
	var body segmentBody
	if err := httpjson.Decode(r, 0, &body); err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.Segment(id)
		if err != nil {
			return err
		}
		if err := body.validate(tx.Q); err != nil {
			return err
		}
		sg := old
		sg.Name, sg.Description, sg.Project, sg.Constraints = body.Name, body.Description, body.Project, domain.EngineConstraints(body.Constraints)
		if err := tx.UpdateSegment(sg); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "segment-updated", Actor: p.Actor(), Project: projectOf(sg.Project), Data: sg, PreData: old})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusNoContent)
}

func (s *Server) deleteSegment(w http.ResponseWriter, r *http.Request) error {
	id, err := segmentID(r)
	if err != nil {
		return err
	}
	p := domain.PrincipalFrom(r.Context())
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error {
		old, err := tx.Segment(id)
		if err != nil {
			return err
		}
		inUse, err := tx.SegmentInUse(id)
		if err != nil {
			return err
		}
		if inUse {
			return apierr.Conflict("Segment %d is used by at least one strategy; remove it from those strategies first.", id)
		}
		if err := tx.DeleteSegment(id); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "segment-deleted", Actor: p.Actor(), Project: projectOf(old.Project), PreData: old})
	})
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusNoContent)
}
