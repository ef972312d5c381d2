package store

import (
	"database/sql"
	"encoding/json"
	"time"

	"github.com/bunting-flags/bunting/engine"
)

// Project is a group of flags with its own settings.
type Project struct {
	ID                string     `json:"id"`
	Name              string     `json:"name"`
	Description       *string    `json:"description"`
	Mode              string     `json:"mode"`
	DefaultStickiness string     `json:"defaultStickiness"`
	Health            int        `json:"health"`
	CreatedAt         time.Time  `json:"createdAt"`
	UpdatedAt         *time.Time `json:"updatedAt"`
}

// Environment is a deployment environment (development, production, …).
type Environment struct {
	Name      string `json:"name"`
	Type      string `json:"type"`
	SortOrder int    `json:"sortOrder"`
	Enabled   bool   `json:"enabled"`
	Protected bool   `json:"protected"`
}

// Feature is a flag's own row, without its environments.
type Feature struct {
	Name             string     `json:"name"`
	Project          string     `json:"project"`
	Type             string     `json:"type"`
	Description      *string    `json:"description"`
	Stale            bool       `json:"stale"`
	PotentiallyStale bool       `json:"potentiallyStale"`
	ImpressionData   bool       `json:"impressionData"`
	Archived         bool       `json:"archived"`
	ArchivedAt       *time.Time `json:"archivedAt"`
	CreatedAt        time.Time  `json:"createdAt"`
	CreatedBy        *string    `json:"-"`
	LastSeenAt       *time.Time `json:"lastSeenAt"`
}

// FeatureEnvironment is a flag's state in one environment.
type FeatureEnvironment struct {
	FeatureName string           `json:"featureName"`
	Environment string           `json:"environment"`
	Enabled     bool             `json:"enabled"`
	Variants    []engine.Variant `json:"variants"`
	LastSeenAt  *time.Time       `json:"lastSeenAt"`
}

// Strategy is one activation strategy of a flag in one environment.
type Strategy struct {
	ID          string              `json:"id"`
	Name        string              `json:"name"`
	Title       *string             `json:"title"`
	Disabled    bool                `json:"disabled"`
	FeatureName string              `json:"featureName"`
	Environment string              `json:"-"`
	SortOrder   int                 `json:"sortOrder"`
	Segments    []int               `json:"segments"`
	Constraints []engine.Constraint `json:"constraints"`
	Variants    []engine.Variant    `json:"variants"`
	Parameters  map[string]string   `json:"parameters"`
	CreatedAt   time.Time           `json:"-"`
}

// Segment is a named, reusable list of constraints.
type Segment struct {
	ID          int                 `json:"id"`
	Name        string              `json:"name"`
	Description *string             `json:"description"`
	Project     *string             `json:"project"`
	Constraints []engine.Constraint `json:"constraints"`
	CreatedBy   *string             `json:"createdBy"`
	CreatedAt   time.Time           `json:"createdAt"`
}

// Dependency makes Child depend on Parent.
type Dependency struct {
	Child    string   `json:"-"`
	Feature  string   `json:"feature"`
	Enabled  bool     `json:"enabled"`
	Variants []string `json:"variants"`
}

// StrategyParameter describes one parameter of a strategy type.
type StrategyParameter struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Description string `json:"description"`
	Required    bool   `json:"required"`
}

// StrategyType is a strategy definition (built-in or custom).
type StrategyType struct {
	Name        string              `json:"name"`
	DisplayName *string             `json:"displayName"`
	Title       *string             `json:"title"`
	Description *string             `json:"description"`
	Editable    bool                `json:"editable"`
	Deprecated  bool                `json:"deprecated"`
	SortOrder   int                 `json:"-"`
	Parameters  []StrategyParameter `json:"parameters"`
}

// FeatureType is a kind of flag with its expected lifetime.
type FeatureType struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	Description  string `json:"description"`
	LifetimeDays *int   `json:"lifetimeDays"`
}

// helpers shared by the scanners

func decodeJSON[T any](raw string, dst *T) error {
	if raw == "" {
		return nil
	}
	return json.Unmarshal([]byte(raw), dst)
}

func encodeJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only called with our own marshalable types
	}
	return string(b)
}

func timePtr(v sql.NullInt64) *time.Time {
	if !v.Valid {
		return nil
	}
	t := FromMillis(v.Int64)
	return &t
}

func strPtr(v sql.NullString) *string {
	if !v.Valid {
		return nil
	}
	s := v.String
	return &s
}

func nullableText(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}
