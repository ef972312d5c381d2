// Package flagsio exports flags of one environment and imports them into a
// project and environment, in the document shape of Unleash's
// features-batch API (export, validate, import). The document is also what
// `bunting flags` keeps in git.
//
// Every change an import makes goes through internal/domain's operations
// (CreateFeature, UpdateFeature, AddStrategy, SetEnabled, ...), so it is
// checked, gated by change requests and recorded in events exactly as the
// admin API's direct routes are, all in the caller's one transaction.
package flagsio

import (
	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// ExportQuery is the body of POST /api/admin/features-batch/export. The
// flags are chosen by tag value, else by name, else by project, else all
// (Unleash's order of precedence).
type ExportQuery struct {
	Features     []string `json:"features,omitempty"`
	Tag          string   `json:"tag,omitempty"`
	Project      string   `json:"project,omitempty"`
	Environment  string   `json:"environment"`
	DownloadFile bool     `json:"downloadFile,omitempty"`
}

// Document is the export's answer and the import's data: the flags with
// their configuration in one environment and what that configuration
// refers to.
type Document struct {
	Features            []Feature        `json:"features"`
	FeatureStrategies   []Strategy       `json:"featureStrategies"`
	FeatureEnvironments []FeatureEnv     `json:"featureEnvironments"`
	ContextFields       []ContextField   `json:"contextFields"`
	FeatureTags         []FeatureTag     `json:"featureTags"`
	Segments            []SegmentRef     `json:"segments"`
	TagTypes            []store.TagType  `json:"tagTypes"`
	Dependencies        []FlagDependency `json:"dependencies"`
	// Links are Unleash's flag links; Bunting has none, so it exports an
	// empty list and ignores imported ones.
	Links []any `json:"links"`
}

// Feature is a flag's metadata.
type Feature struct {
	Name           string  `json:"name"`
	Description    *string `json:"description"`
	Type           string  `json:"type"`
	Project        string  `json:"project,omitempty"`
	Stale          bool    `json:"stale"`
	ImpressionData bool    `json:"impressionData"`
	Archived       bool    `json:"archived"`
}

// Strategy is one strategy of a flag in the exported environment.
type Strategy struct {
	Name        string                   `json:"name"`
	ID          string                   `json:"id,omitempty"`
	FeatureName string                   `json:"featureName"`
	Title       *string                  `json:"title"`
	Disabled    bool                     `json:"disabled"`
	SortOrder   *int32                   `json:"sortOrder,omitempty"`
	Parameters  engine.Parameters        `json:"parameters"`
	Constraints []domain.ConstraintInput `json:"constraints"`
	Variants    []domain.VariantInput    `json:"variants"`
	Segments    []int                    `json:"segments"`
}

// FeatureEnv is a flag's switch and (legacy) variants in the exported
// environment; Name repeats the flag's name, as Unleash writes it.
type FeatureEnv struct {
	Name        string                `json:"name"`
	FeatureName string                `json:"featureName"`
	Environment string                `json:"environment,omitempty"`
	Enabled     bool                  `json:"enabled"`
	Variants    []domain.VariantInput `json:"variants"`
}

// ContextField is a context field the exported configuration uses.
type ContextField struct {
	Name        string             `json:"name"`
	Description *string            `json:"description"`
	Stickiness  bool               `json:"stickiness"`
	SortOrder   int32              `json:"sortOrder"`
	LegalValues []store.LegalValue `json:"legalValues"`
}

// FeatureTag is one tag of a flag.
type FeatureTag struct {
	FeatureName string `json:"featureName"`
	TagType     string `json:"tagType"`
	TagValue    string `json:"tagValue"`
}

// SegmentRef names a segment the strategies refer to by id; an import
// finds the segment by name.
type SegmentRef struct {
	ID   int    `json:"id"`
	Name string `json:"name"`
}

// FlagDependency is a flag's parents.
type FlagDependency struct {
	Feature      string             `json:"feature"`
	Dependencies []store.Dependency `json:"dependencies"`
}

// ImportRequest is the body of validate and import: the document and the
// project and environment it goes into.
type ImportRequest struct {
	Project     string    `json:"project"`
	Environment string    `json:"environment"`
	Data        *Document `json:"data"`
}

// Validation is validate's answer: what stops the import (errors), what it
// will do that one may not expect (warnings), and the permissions the
// caller lacks for it.
type Validation struct {
	Errors      []Message `json:"errors"`
	Warnings    []Message `json:"warnings"`
	Permissions []Message `json:"permissions"`
}

// Message is one finding with the items it concerns.
type Message struct {
	Message       string   `json:"message"`
	AffectedItems []string `json:"affectedItems"`
}

// Ok reports whether nothing stops the import.
func (v Validation) Ok() bool { return len(v.Errors) == 0 && len(v.Permissions) == 0 }
