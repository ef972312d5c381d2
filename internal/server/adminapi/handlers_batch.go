package adminapi

import (
	"net/http"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/flagsio"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// The features-batch routes (Unleash's export and import of flags between
// projects and environments): decode, call internal/flagsio, answer.

func (s *API) exportBatch(w http.ResponseWriter, r *http.Request) error {
	var in flagsio.ExportQuery
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return err
	}
	doc, err := flagsio.Export(s.store.Q(r.Context()), domain.PrincipalFrom(r.Context()), in)
	if err != nil {
		return err
	}
	if in.DownloadFile {
		name := "export-" + s.store.Now().UTC().Format("2006-01-02_15-04-05") + ".json"
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	}
	return httpjson.Write(w, http.StatusOK, doc)
}

func (s *API) validateBatch(w http.ResponseWriter, r *http.Request) error {
	var in flagsio.ImportRequest
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return err
	}
	v, err := flagsio.Validate(r.Context(), s.store, domain.PrincipalFrom(r.Context()), in)
	if err != nil {
		return err
	}
	return httpjson.Write(w, http.StatusOK, v)
}

func (s *API) importBatch(w http.ResponseWriter, r *http.Request) error {
	var in flagsio.ImportRequest
	if err := httpjson.Decode(r, 0, &in); err != nil {
		return err
	}
	opts := flagsio.Options{Prune: queryBool(r, "prune", false)}
	p := domain.PrincipalFrom(r.Context())
	if err := s.store.Tx(r.Context(), func(tx *store.Tx) error { return flagsio.Import(tx, p, in, opts) }); err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusOK)
}
