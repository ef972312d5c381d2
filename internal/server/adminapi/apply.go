package adminapi

import (
	"net/http"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// apply is an admin change in its usual form: decode the JSON body into
// an In, run op as the caller in one transaction (the domain operation
// checks, changes and writes its event there) and return its result for the
// handler to answer with. Changes whose path names a flag or a segment use
// s.change instead, which honours If-Match.
func apply[In, Out any](s *API, r *http.Request, op func(tx *store.Tx, p *domain.Principal, in In) (Out, error)) (Out, error) {
	var in In
	var out Out
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return out, err
	}
	p := domain.PrincipalFrom(r.Context())
	err := s.store.Tx(r.Context(), func(tx *store.Tx) (err error) {
		out, err = op(tx, p, in)
		return err
	})
	return out, err
}
