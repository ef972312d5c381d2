package domain

import (
	"fmt"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/store"
)

// stateVersion is the version of the state export document (Unleash 5.x
// writes 4).
const stateVersion = 4

// StateDocument is the state export record, also accepted by state import.
type StateDocument struct {
	Version                 int                    `json:"version"`
	Features                []store.Feature        `json:"features"`
	Strategies              []store.StrategyType   `json:"strategies"`
	Tags                    []store.Tag            `json:"tags"`
	TagTypes                []store.TagType        `json:"tagTypes"`
	FeatureTags             []stateFeatureTag      `json:"featureTags"`
	Projects                []store.Project        `json:"projects"`
	FeatureStrategies       []stateStrategy        `json:"featureStrategies"`
	FeatureEnvironments     []stateFeatureEnv      `json:"featureEnvironments"`
	Environments            []stateEnvironment     `json:"environments"`
	Segments                []store.Segment        `json:"segments"`
	FeatureStrategySegments []stateStrategySegment `json:"featureStrategySegments"`
}

// stateFeatureTag links a flag to a tag; type and value repeat tagType and
// tagValue for older readers.
type stateFeatureTag struct {
	FeatureName     string `json:"featureName"`
	TagType         string `json:"tagType"`
	TagValue        string `json:"tagValue"`
	Type            string `json:"type,omitempty"`
	Value           string `json:"value,omitempty"`
	CreatedByUserID *int64 `json:"createdByUserId"`
}

// stateStrategy is a flag strategy with the flag, project and environment
// it belongs to.
type stateStrategy struct {
	ID           string              `json:"id"`
	FeatureName  string              `json:"featureName"`
	ProjectID    string              `json:"projectId"`
	Environment  string              `json:"environment"`
	Name         string              `json:"name"`
	StrategyName string              `json:"strategyName"`
	Title        *string             `json:"title"`
	Disabled     bool                `json:"disabled"`
	SortOrder    int32               `json:"sortOrder"`
	Parameters   map[string]string   `json:"parameters"`
	Constraints  []engine.Constraint `json:"constraints"`
	Variants     []engine.Variant    `json:"variants"`
	Segments     []int               `json:"segments"`
	CreatedAt    *time.Time          `json:"createdAt"`
}

// stateFeatureEnv is a flag's state in one environment.
type stateFeatureEnv struct {
	Name        string           `json:"name"`
	FeatureName string           `json:"featureName"`
	Environment string           `json:"environment"`
	Enabled     bool             `json:"enabled"`
	Variants    []engine.Variant `json:"variants"`
}

// stateEnvironment is an environment with its usage counts.
type stateEnvironment struct {
	Name               string `json:"name"`
	Type               string `json:"type"`
	Enabled            *bool  `json:"enabled"`
	Protected          bool   `json:"protected"`
	SortOrder          int32  `json:"sortOrder"`
	ProjectCount       *int   `json:"projectCount"`
	APITokenCount      *int   `json:"apiTokenCount"`
	EnabledToggleCount *int   `json:"enabledToggleCount"`
}

// stateStrategySegment links a flag strategy to a segment.
type stateStrategySegment struct {
	SegmentID         int    `json:"segmentId"`
	FeatureStrategyID string `json:"featureStrategyId"`
}

// ExportOptions choose the sections of a state export; segments are
// always included.
type ExportOptions struct {
	Strategies, FeatureToggles, Projects, Tags, Environments bool
}

// ExportState reads the sections opts asks for as p (who needs ADMIN).
func ExportState(q store.Q, p *Principal, opts ExportOptions) (StateDocument, error) {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return StateDocument{}, err
	}
	doc := StateDocument{Version: stateVersion, Features: []store.Feature{}, Strategies: []store.StrategyType{}, Tags: []store.Tag{},
		TagTypes: []store.TagType{}, FeatureTags: []stateFeatureTag{}, Projects: []store.Project{}, FeatureStrategies: []stateStrategy{},
		FeatureEnvironments: []stateFeatureEnv{}, Environments: []stateEnvironment{}, FeatureStrategySegments: []stateStrategySegment{}}
	var err error
	if doc.Segments, err = q.Segments(); err != nil {
		return doc, err
	}
	steps := []struct {
		on   bool
		load func(store.Q, *StateDocument) error
	}{
		{opts.FeatureToggles, exportFeatures},
		{opts.Strategies, exportStrategyTypes},
		{opts.Projects, exportProjects},
		{opts.Tags, exportTags},
		{opts.Environments, exportEnvironments},
	}
	for _, st := range steps {
		if st.on {
			if err := st.load(q, &doc); err != nil {
				return doc, err
			}
		}
	}
	if !opts.FeatureToggles {
		doc.FeatureTags = []stateFeatureTag{}
	}
	return doc, nil
}

func exportFeatures(q store.Q, doc *StateDocument) error {
	features, err := q.Features("", false)
	if err != nil {
		return err
	}
	doc.Features = features
	project := map[string]string{}
	for _, f := range features {
		project[f.Name] = f.Project
	}
	envs, err := q.AllFeatureEnvironments()
	if err != nil {
		return err
	}
	for _, fe := range envs {
		doc.FeatureEnvironments = append(doc.FeatureEnvironments, stateFeatureEnv{Name: fe.Environment, FeatureName: fe.FeatureName,
			Environment: fe.Environment, Enabled: fe.Enabled, Variants: fe.Variants})
	}
	strategies, err := q.AllStrategies()
	if err != nil {
		return err
	}
	for _, st := range strategies {
		p, live := project[st.FeatureName]
		if !live {
			continue
		}
		created := st.CreatedAt
		doc.FeatureStrategies = append(doc.FeatureStrategies, stateStrategy{ID: st.ID, FeatureName: st.FeatureName, ProjectID: p,
			Environment: st.Environment, Name: st.Name, StrategyName: st.Name, Title: st.Title, Disabled: st.Disabled, SortOrder: int32(st.SortOrder),
			Parameters: st.Parameters, Constraints: st.Constraints, Variants: st.Variants, Segments: st.Segments, CreatedAt: &created})
		for _, seg := range st.Segments {
			doc.FeatureStrategySegments = append(doc.FeatureStrategySegments, stateStrategySegment{SegmentID: seg, FeatureStrategyID: st.ID})
		}
	}
	return nil
}

func exportStrategyTypes(q store.Q, doc *StateDocument) error {
	types, err := q.StrategyTypes()
	for _, t := range types {
		if t.Editable {
			doc.Strategies = append(doc.Strategies, t)
		}
	}
	return err
}

func exportProjects(q store.Q, doc *StateDocument) error {
	projects, err := q.Projects()
	if projects != nil {
		doc.Projects = projects
	}
	return err
}

func exportTags(q store.Q, doc *StateDocument) error {
	var err error
	if doc.TagTypes, err = q.TagTypes(); err != nil {
		return err
	}
	if doc.Tags, err = q.Tags(""); err != nil {
		return err
	}
	links, err := q.AllFeatureTags()
	for _, l := range links {
		doc.FeatureTags = append(doc.FeatureTags, stateFeatureTag{FeatureName: l.FeatureName, TagType: l.TagType, TagValue: l.TagValue,
			Type: l.TagType, Value: l.TagValue, CreatedByUserID: l.CreatedByUserID})
	}
	return err
}

func exportEnvironments(q store.Q, doc *StateDocument) error {
	envs, err := q.Environments()
	if err != nil {
		return err
	}
	counts, err := q.EnvironmentCounts()
	if err != nil {
		return err
	}
	for _, e := range envs {
		c := counts[e.Name]
		enabled := e.Enabled
		doc.Environments = append(doc.Environments, stateEnvironment{Name: e.Name, Type: e.Type, Enabled: &enabled, Protected: e.Protected,
			SortOrder: int32(e.SortOrder), ProjectCount: &c.ProjectCount, APITokenCount: &c.APITokenCount, EnabledToggleCount: &c.EnabledToggleCount})
	}
	return nil
}

// ImportOptions are the options of a state import: Drop deletes the
// sections present in the document first; Keep leaves existing items
// unchanged.
type ImportOptions struct{ Drop, Keep bool }

// ImportState applies a state document as p (who needs ADMIN) in tx, with
// an event for every change.
func ImportState(tx *store.Tx, p *Principal, doc StateDocument, opts ImportOptions) error {
	if err := p.Require(PermAdmin, "", ""); err != nil {
		return err
	}
	im := &importer{tx: tx, p: p, actor: p.Actor(), opts: opts, segmentIDs: map[int]int{}}
	return im.run(doc)
}

// importer applies a state document inside one transaction.
type importer struct {
	tx         *store.Tx
	p          *Principal
	actor      store.Actor
	opts       ImportOptions
	segmentIDs map[int]int // id in the document → id here
}

func (im *importer) event(typ string, data any, feature, project, env string) error {
	return im.tx.Event(store.NewEvent{Type: typ, Actor: im.actor, Data: data, FeatureName: feature, Project: project, Environment: env})
}

func (im *importer) run(doc StateDocument) error {
	if im.opts.Drop {
		if err := im.dropSections(doc); err != nil {
			return err
		}
	}
	steps := []func(StateDocument) error{im.environments, im.projects, im.strategyTypes, im.tagTypes, im.tags, im.segments, im.features, im.featureTags}
	for _, step := range steps {
		if err := step(doc); err != nil {
			return err
		}
	}
	return nil
}

// dropSections deletes what the document's sections replace, each with its
// drop-* event.
func (im *importer) dropSections(doc StateDocument) error {
	drops := []struct {
		present bool
		event   string
		drop    func() error
	}{
		{doc.Features != nil, "drop-features", im.tx.DropFeatures},
		{doc.Strategies != nil, "drop-strategies", im.tx.DropCustomStrategyTypes},
		{doc.FeatureTags != nil, "drop-feature-tags", im.tx.DropFeatureTags},
		{doc.Tags != nil, "drop-tags", im.tx.DropTags},
		{doc.TagTypes != nil, "drop-tag-types", im.tx.DropTagTypes},
	}
	if doc.Features != nil {
		// Dropping the flags changes every protected environment too.
		projects, err := im.tx.Projects()
		if err != nil {
			return err
		}
		for _, pr := range projects {
			if err := gateChange(im.tx.Q, im.p, pr.ID); err != nil {
				return err
			}
		}
	}
	for _, d := range drops {
		if !d.present {
			continue
		}
		if err := d.drop(); err != nil {
			return err
		}
		if err := im.event(d.event, nil, "", "", ""); err != nil {
			return err
		}
	}
	return nil
}

func (im *importer) environments(doc StateDocument) error {
	for i, e := range doc.Environments {
		if err := CheckResourceName(fmt.Sprintf("environments[%d].name", i), e.Name); err != nil {
			return err
		}
		env := store.Environment{Name: e.Name, Type: e.Type, SortOrder: int(e.SortOrder), Enabled: e.Enabled == nil || *e.Enabled, Protected: e.Protected}
		if env.Type == "" {
			env.Type = "development"
		}
		_, err := im.tx.Environment(e.Name)
		switch {
		case apierr.IsKind(err, apierr.KindNotFound):
			err = im.tx.InsertEnvironment(env)
		case err == nil && !im.opts.Keep:
			err = im.tx.UpdateEnvironment(env)
		case err == nil:
			continue
		}
		if err != nil {
			return err
		}
		if err := im.event("environment-import", env, "", "", e.Name); err != nil {
			return err
		}
	}
	return nil
}

func (im *importer) projects(doc StateDocument) error {
	envs, err := im.tx.Environments()
	if err != nil {
		return err
	}
	var envNames []string
	for _, e := range envs {
		if e.Enabled {
			envNames = append(envNames, e.Name)
		}
	}
	for i, p := range doc.Projects {
		if err := CheckResourceName(fmt.Sprintf("projects[%d].id", i), p.ID); err != nil {
			return err
		}
		if p.Name == "" {
			p.Name = p.ID
		}
		if p.Mode == "" {
			p.Mode = "open"
		}
		if p.DefaultStickiness == "" {
			p.DefaultStickiness = "default"
		}
		p.Health, p.CreatedAt = 100, im.tx.Now()
		_, err := im.tx.Project(p.ID)
		switch {
		case apierr.IsKind(err, apierr.KindNotFound):
			err = im.tx.InsertProject(p, envNames)
		case err == nil && !im.opts.Keep:
			err = im.tx.UpdateProject(p)
		case err == nil:
			continue
		}
		if err != nil {
			return err
		}
		if err := im.event("project-import", p, "", p.ID, ""); err != nil {
			return err
		}
	}
	return nil
}

func (im *importer) strategyTypes(doc StateDocument) error {
	for i, t := range doc.Strategies {
		if err := CheckResourceName(fmt.Sprintf("strategies[%d].name", i), t.Name); err != nil {
			return err
		}
		old, err := im.tx.StrategyType(t.Name)
		if err == nil && !old.Editable {
			continue // built-in types are never replaced
		}
		t.Editable, t.SortOrder = true, 9999
		switch {
		case apierr.IsKind(err, apierr.KindNotFound):
			err = im.tx.InsertStrategyType(t)
		case err == nil && !im.opts.Keep:
			err = im.tx.UpdateStrategyType(t)
		case err == nil:
			continue
		}
		if err != nil {
			return err
		}
		if err := im.event("strategy-import", t, "", "", ""); err != nil {
			return err
		}
	}
	return nil
}

func (im *importer) tagTypes(doc StateDocument) error {
	for i, t := range doc.TagTypes {
		if err := CheckResourceName(fmt.Sprintf("tagTypes[%d].name", i), t.Name); err != nil {
			return err
		}
		_, err := im.tx.TagType(t.Name)
		switch {
		case apierr.IsKind(err, apierr.KindNotFound):
			err = im.tx.InsertTagType(t)
		case err == nil && !im.opts.Keep:
			err = im.tx.UpdateTagType(t)
		case err == nil:
			continue
		}
		if err != nil {
			return err
		}
		if err := im.event("tag-type-import", t, "", "", ""); err != nil {
			return err
		}
	}
	return nil
}

func (im *importer) tags(doc StateDocument) error {
	for i, t := range doc.Tags {
		if err := CheckTag(t); err != nil {
			return apierr.Validation("tags[%d]: %s", i, apierr.From(err).Message)
		}
		if err := im.importTag(t); err != nil {
			return err
		}
	}
	return nil
}

// importTag creates a tag (its type must exist) and writes tag-import.
func (im *importer) importTag(t store.Tag) error {
	if _, err := im.tx.TagType(t.Type); apierr.IsKind(err, apierr.KindNotFound) {
		return apierr.Validation("Tag type '%s' does not exist", t.Type)
	} else if err != nil {
		return err
	}
	created, err := im.tx.InsertTag(t)
	if err != nil || !created {
		return err
	}
	return im.event("tag-import", t, "", "", "")
}

func (im *importer) segments(doc StateDocument) error {
	for i, sg := range doc.Segments {
		if strings.TrimSpace(sg.Name) == "" {
			return apierr.Validation("The `segments[%d].name` property is required.", i)
		}
		if err := ValidateConstraints(fmt.Sprintf("segments[%d].constraints", i), ConstraintInputs(sg.Constraints)); err != nil {
			return err
		}
		existing, err := im.tx.SegmentIDByName(sg.Name)
		if err != nil {
			return err
		}
		if existing != 0 {
			im.segmentIDs[sg.ID] = existing
			if im.opts.Keep {
				continue
			}
			sg.ID = existing
			err = im.tx.UpdateSegment(sg)
		} else {
			docID := sg.ID
			sg.CreatedAt = im.tx.Now()
			sg.ID, err = im.tx.InsertSegment(sg)
			im.segmentIDs[docID] = sg.ID
		}
		if err != nil {
			return err
		}
		if err := im.event("segment-import", sg, "", stringOr(sg.Project), ""); err != nil {
			return err
		}
	}
	return nil
}

func stringOr(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// features imports flags with their environment states and strategies.
// With keep, flags that exist are left as they are, strategies included.
func (im *importer) features(doc StateDocument) error {
	imported := map[string]store.Feature{}
	for i, f := range doc.Features {
		done, err := im.importFeature(i, f)
		if err != nil {
			return err
		}
		if done {
			imported[f.Name] = f
		}
	}
	for i, fe := range doc.FeatureEnvironments {
		f, ok := imported[fe.FeatureName]
		if !ok {
			continue
		}
		env := fe.Environment
		if env == "" {
			env = fe.Name
		}
		if _, err := im.tx.Environment(env); err != nil {
			return apierr.Validation("featureEnvironments[%d]: environment %q does not exist", i, env)
		}
		if err := gateChange(im.tx.Q, im.p, f.Project, env); err != nil {
			return err
		}
		variants, err := NormalizeVariants(fmt.Sprintf("featureEnvironments[%d].variants", i), VariantInputs(fe.Variants), DefaultedVariants)
		if err != nil {
			return err
		}
		if err := im.tx.UpsertFeatureEnvironment(f.Name, env, fe.Enabled, variants); err != nil {
			return err
		}
	}
	extraSegments := map[string][]int{}
	for _, l := range doc.FeatureStrategySegments {
		extraSegments[l.FeatureStrategyID] = append(extraSegments[l.FeatureStrategyID], l.SegmentID)
	}
	for i, st := range doc.FeatureStrategies {
		f, ok := imported[st.FeatureName]
		if !ok {
			continue
		}
		if err := im.importStrategy(i, f, st, extraSegments[st.ID]); err != nil {
			return err
		}
	}
	return nil
}

func (im *importer) importFeature(i int, f store.Feature) (bool, error) {
	if err := CheckResourceName(fmt.Sprintf("features[%d].name", i), f.Name); err != nil {
		return false, err
	}
	if f.Project == "" {
		f.Project = "default"
	}
	if f.Type == "" {
		f.Type = "release"
	}
	if _, err := im.tx.Project(f.Project); err != nil {
		return false, apierr.Validation("features[%d]: project %q does not exist", i, f.Project)
	}
	if _, err := im.tx.FeatureType(f.Type); err != nil {
		return false, apierr.Validation("features[%d]: feature type %q does not exist", i, f.Type)
	}
	old, err := im.tx.Feature(f.Name)
	switch {
	case apierr.IsKind(err, apierr.KindNotFound):
		if f.CreatedAt.IsZero() {
			f.CreatedAt = im.tx.Now()
		}
		err = im.tx.InsertFeature(f)
	case err == nil && im.opts.Keep:
		return false, nil
	case err == nil:
		if old.Project != f.Project {
			return false, apierr.Validation("features[%d]: flag %q exists in project %q, not %q", i, f.Name, old.Project, f.Project)
		}
		if err := gateChange(im.tx.Q, im.p, f.Project); err != nil {
			return false, err
		}
		f.PotentiallyStale = old.PotentiallyStale
		if err = im.tx.UpdateFeature(f); err == nil {
			err = im.tx.DeleteFeatureStrategies(f.Name)
		}
	}
	if err != nil {
		return false, err
	}
	return true, im.event("feature-import", f, f.Name, f.Project, "")
}

func (im *importer) importStrategy(i int, f store.Feature, st stateStrategy, extraSegments []int) error {
	name := st.Name
	if name == "" {
		name = st.StrategyName
	}
	if _, err := im.tx.StrategyType(name); err != nil {
		return apierr.Validation("featureStrategies[%d]: could not find strategy type with name %q", i, name)
	}
	if _, err := im.tx.FeatureEnvironment(f.Name, st.Environment); err != nil {
		return apierr.Validation("featureStrategies[%d]: flag %q has no environment %q", i, f.Name, st.Environment)
	}
	if err := gateChange(im.tx.Q, im.p, f.Project, st.Environment); err != nil {
		return err
	}
	at := fmt.Sprintf("featureStrategies[%d]", i)
	if err := ValidateConstraints(at+".constraints", ConstraintInputs(st.Constraints)); err != nil {
		return err
	}
	variants, err := NormalizeVariants(at+".variants", VariantInputs(st.Variants), DefaultedVariants)
	if err != nil {
		return err
	}
	id := st.ID
	if exists, err := im.tx.StrategyExists(id); err != nil {
		return err
	} else if id == "" || exists {
		id = uuid.NewString()
	}
	var segments []int
	for _, seg := range append(append([]int{}, st.Segments...), extraSegments...) {
		if mapped, ok := im.segmentIDs[seg]; ok {
			seg = mapped
		}
		segments = append(segments, seg)
	}
	s := store.Strategy{ID: id, Name: name, Title: st.Title, Disabled: st.Disabled, FeatureName: f.Name, Environment: st.Environment,
		SortOrder: int(st.SortOrder), Segments: segments, Constraints: st.Constraints, Variants: variants, Parameters: st.Parameters, CreatedAt: im.tx.Now()}
	if err := im.tx.InsertStrategy(s); err != nil {
		return err
	}
	return im.event("feature-strategy-add", s, f.Name, f.Project, st.Environment)
}

func (im *importer) featureTags(doc StateDocument) error {
	for i, l := range doc.FeatureTags {
		t := store.Tag{Type: l.TagType, Value: l.TagValue}
		if t.Type == "" {
			t = store.Tag{Type: l.Type, Value: l.Value}
		}
		if err := CheckTag(t); err != nil {
			return apierr.Validation("featureTags[%d]: %s", i, apierr.From(err).Message)
		}
		f, err := im.tx.Feature(l.FeatureName)
		if err != nil {
			return apierr.Validation("featureTags[%d]: flag %q does not exist", i, l.FeatureName)
		}
		if err := im.importTag(t); err != nil {
			return err
		}
		added, err := im.tx.TagFeature(store.FeatureTag{FeatureName: f.Name, TagType: t.Type, TagValue: t.Value, CreatedByUserID: l.CreatedByUserID}, im.tx.Now())
		if err != nil {
			return err
		}
		if !added {
			continue
		}
		if err := im.event("feature-tag-import", stateFeatureTag{FeatureName: f.Name, TagType: t.Type, TagValue: t.Value}, f.Name, f.Project, ""); err != nil {
			return err
		}
	}
	return nil
}
