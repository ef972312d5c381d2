package domain

import (
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// ProjectSettingsInput is the body of PUT /api/admin/projects/{id}/settings,
// Unleash Enterprise's project settings, which its Terraform provider sends
// with every project it creates or updates.
type ProjectSettingsInput struct {
	Mode          string              `json:"mode"`
	FeatureNaming *FeatureNamingInput `json:"featureNaming"`
	LinkTemplates []LinkTemplateInput `json:"linkTemplates"`
}

// FeatureNamingInput is a flag-naming pattern (not kept by Bunting).
type FeatureNamingInput struct {
	Pattern     *string `json:"pattern"`
	Example     *string `json:"example"`
	Description *string `json:"description"`
}

// LinkTemplateInput is a link shown on every flag (not kept by Bunting).
type LinkTemplateInput struct {
	Title       *string `json:"title"`
	URLTemplate string  `json:"urlTemplate"`
}

// UpdateProjectSettings changes a project's mode as p, with its event (as
// UpdateProject). Bunting keeps no flag-naming pattern and no link
// templates: asking for one is refused rather than ignored, so that what
// is applied is what holds.
func UpdateProjectSettings(tx *store.Tx, p *Principal, id string, in ProjectSettingsInput) error {
	if n := in.FeatureNaming; n != nil && n.Pattern != nil && *n.Pattern != "" {
		return apierr.Validation("Bunting does not enforce flag-naming patterns (`featureNaming`); leave it out.")
	}
	if len(in.LinkTemplates) > 0 {
		return apierr.Validation("Bunting does not keep link templates (`linkTemplates`); leave them out.")
	}
	if err := p.Require(PermUpdateProject, id, ""); err != nil {
		return err
	}
	old, err := tx.Project(id)
	if err != nil {
		return err
	}
	_, err = UpdateProject(tx, p, id, ProjectInput{Name: old.Name, Description: old.Description, Mode: in.Mode})
	return err
}
