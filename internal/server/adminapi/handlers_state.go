package adminapi

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/store"
)

// The state export and import routes: query options, formats (JSON or
// YAML) and download headers; domain.ExportState and domain.ImportState
// do the work.

// exportOptions are the query options of GET /api/admin/state/export.
type exportOptions struct {
	yaml, download bool
	sections       domain.ExportOptions
}

// queryBool reads a boolean-ish query value as Unleash does: "true" (any
// case) or a non-zero number is true, any other value false, absent def.
func queryBool(r *http.Request, name string, def bool) bool {
	v, ok := r.URL.Query()[name]
	if !ok || len(v) == 0 {
		return def
	}
	s := strings.TrimSpace(v[0])
	if n, err := strconv.ParseFloat(s, 64); err == nil {
		return n != 0
	}
	return strings.EqualFold(s, "true")
}

func parseExportOptions(r *http.Request) (exportOptions, error) {
	o := exportOptions{download: queryBool(r, "download", false), sections: domain.ExportOptions{
		Strategies: queryBool(r, "strategies", true), FeatureToggles: queryBool(r, "featureToggles", true),
		Projects: queryBool(r, "projects", true), Tags: queryBool(r, "tags", true), Environments: queryBool(r, "environments", true),
	}}
	switch f := r.URL.Query().Get("format"); f {
	case "", "json":
	case "yaml":
		o.yaml = true
	default:
		return o, apierr.Validation("The `format` property must be equal to one of the allowed values: \"json\", \"yaml\". You provided %q.", f)
	}
	return o, nil
}

func (s *API) exportState(w http.ResponseWriter, r *http.Request) error {
	opts, err := parseExportOptions(r)
	if err != nil {
		return err
	}
	doc, err := domain.ExportState(s.store.Q(r.Context()), domain.PrincipalFrom(r.Context()), opts.sections)
	if err != nil {
		return err
	}
	ext, body := "json", []byte(nil)
	if opts.yaml {
		ext = "yml"
		if body, err = toYAML(doc); err != nil {
			return apierr.Internal(err)
		}
		w.Header().Set("Content-Type", "text/yaml; charset=utf-8")
	} else {
		if body, err = json.Marshal(doc); err != nil {
			return apierr.Internal(err)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
	}
	if opts.download {
		name := "export-" + s.store.Now().UTC().Format("2006-01-02_15-04-05") + "." + ext
		w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	}
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(body)
	return nil
}

// toYAML writes the document with the same property names as its JSON.
func toYAML(doc any) ([]byte, error) {
	b, err := json.Marshal(doc)
	if err != nil {
		return nil, err
	}
	var generic any
	if err := json.Unmarshal(b, &generic); err != nil {
		return nil, err
	}
	return yaml.Marshal(generic)
}

// readStateDocument decodes an import body: JSON, or YAML when the content
// type says so. Other content types are refused with 415.
func readStateDocument(r *http.Request) (domain.StateDocument, error) {
	var doc domain.StateDocument
	ct := r.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ct)
	isYAML := mt == "text/yaml" || mt == "application/yaml" || mt == "application/x-yaml" || mt == "text/x-yaml"
	if !isYAML && mt != "application/json" {
		if ct == "" {
			ct = "you didn't provide one"
		}
		return doc, apierr.UnsupportedMediaType("We do not accept the content-type you provided (%s). Use application/json or text/yaml.", ct)
	}
	if !isYAML {
		return doc, httpjson.Decode(r, 0, &doc)
	}
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		return doc, apierr.From(err)
	}
	var generic any
	if err := yaml.Unmarshal(raw, &generic); err != nil {
		return doc, apierr.Validation("The request body is not valid YAML: %v", err)
	}
	if _, ok := generic.(map[string]any); !ok {
		return doc, apierr.Validation("The request body must be a YAML mapping with the state export's sections.")
	}
	b, err := json.Marshal(generic)
	if err != nil {
		return doc, apierr.Validation("The request body cannot be read as the state export document: %v", err)
	}
	return doc, httpjson.Unmarshal(bytes.TrimSpace(b), &doc)
}

func (s *API) importState(w http.ResponseWriter, r *http.Request) error {
	doc, err := readStateDocument(r)
	if err != nil {
		return err
	}
	opts := domain.ImportOptions{Drop: queryBool(r, "drop", false), Keep: queryBool(r, "keep", true)}
	p := domain.PrincipalFrom(r.Context())
	err = s.store.Tx(r.Context(), func(tx *store.Tx) error { return domain.ImportState(tx, p, doc, opts) })
	if err != nil {
		return err
	}
	return httpjson.WriteStatus(w, http.StatusAccepted)
}
