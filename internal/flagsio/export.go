package flagsio

import (
	"cmp"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// Export reads the flags in.Features, in.Tag or in.Project choose (all
// flags when none does) with their configuration in in.Environment, as p
// sees them: flags of private projects p may not see are left out, as
// everywhere else. Archived flags are never exported.
func Export(q store.Q, p *domain.Principal, in ExportQuery) (Document, error) {
	if strings.TrimSpace(in.Environment) == "" {
		return Document{}, apierr.Validation("The `environment` property is required: the environment to export from.")
	}
	if _, err := q.Environment(in.Environment); err != nil {
		if apierr.IsKind(err, apierr.KindNotFound) {
			return Document{}, apierr.Validation("The `environment` property names no environment: %q does not exist.", in.Environment)
		}
		return Document{}, err
	}
	flags, err := selectFlags(q, in)
	if err != nil {
		return Document{}, err
	}
	flags = slices.DeleteFunc(flags, func(f store.Feature) bool { return f.Archived || !p.CanSeeProject(f.Project) })
	slices.SortFunc(flags, func(a, b store.Feature) int { return cmp.Compare(a.Name, b.Name) })
	return read(q, flags, in.Environment)
}

// selectFlags is the flags the query names, Unleash's precedence: a tag
// value, else names, else a project, else every flag.
func selectFlags(q store.Q, in ExportQuery) ([]store.Feature, error) {
	var names []string
	switch {
	case in.Tag != "":
		links, err := q.AllFeatureTags()
		if err != nil {
			return nil, err
		}
		for _, l := range links {
			if l.TagValue == in.Tag && !slices.Contains(names, l.FeatureName) {
				names = append(names, l.FeatureName)
			}
		}
	case len(in.Features) > 0:
		names = in.Features
	default:
		return q.Features(in.Project, false)
	}
	var flags []store.Feature
	for _, n := range names {
		f, err := q.Feature(n)
		if apierr.IsKind(err, apierr.KindNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if !slices.ContainsFunc(flags, func(o store.Feature) bool { return o.Name == f.Name }) {
			flags = append(flags, f)
		}
	}
	return flags, nil
}

// current is every flag's configuration in one environment, read in a
// fixed number of queries however many flags there are.
type current struct {
	envs       map[string]store.FeatureEnvironment
	strategies map[string][]store.Strategy
	tags       map[string][]FeatureTag
	deps       map[string][]store.Dependency
}

func loadCurrent(q store.Q, env string) (current, error) {
	c := current{envs: map[string]store.FeatureEnvironment{}, strategies: map[string][]store.Strategy{},
		tags: map[string][]FeatureTag{}, deps: map[string][]store.Dependency{}}
	envs, err := q.AllFeatureEnvironments()
	if err != nil {
		return c, err
	}
	for _, fe := range envs {
		if fe.Environment == env {
			c.envs[fe.FeatureName] = fe
		}
	}
	strategies, err := q.AllStrategies()
	if err != nil {
		return c, err
	}
	for _, st := range strategies {
		if st.Environment == env {
			c.strategies[st.FeatureName] = append(c.strategies[st.FeatureName], st)
		}
	}
	links, err := q.AllFeatureTags()
	if err != nil {
		return c, err
	}
	for _, l := range links {
		c.tags[l.FeatureName] = append(c.tags[l.FeatureName], FeatureTag{FeatureName: l.FeatureName, TagType: l.TagType, TagValue: l.TagValue})
	}
	deps, err := q.Dependencies("")
	if err != nil {
		return c, err
	}
	for _, d := range deps {
		d.Variants = domain.NonNil(d.Variants)
		child := d.Child
		d.Child = ""
		c.deps[child] = append(c.deps[child], d)
	}
	return c, nil
}

// read builds the document of flags in env.
func read(q store.Q, flags []store.Feature, env string) (Document, error) {
	doc := Document{Features: []Feature{}, FeatureStrategies: []Strategy{}, FeatureEnvironments: []FeatureEnv{}, ContextFields: []ContextField{},
		FeatureTags: []FeatureTag{}, Segments: []SegmentRef{}, TagTypes: []store.TagType{}, Dependencies: []FlagDependency{}, Links: []any{}}
	cur, err := loadCurrent(q, env)
	if err != nil {
		return doc, err
	}
	usedContext, usedSegments, usedTagTypes := map[string]bool{}, map[int]bool{}, map[string]bool{}
	for _, f := range flags {
		doc.Features = append(doc.Features, Feature{Name: f.Name, Description: f.Description, Type: f.Type, Project: f.Project,
			Stale: f.Stale, ImpressionData: f.ImpressionData})
		// A flag whose project does not use env has nothing there.
		if fe, ok := cur.envs[f.Name]; ok {
			doc.FeatureEnvironments = append(doc.FeatureEnvironments, FeatureEnv{Name: f.Name, FeatureName: f.Name, Environment: env,
				Enabled: fe.Enabled, Variants: domain.NonNil(domain.VariantInputs(fe.Variants))})
			for _, v := range fe.Variants {
				markVariant(usedContext, v.Stickiness, v.Overrides)
			}
		}
		// Strategies are listed in their order; like Unleash, the export
		// leaves sortOrder out, and an import adds them in list order.
		for _, st := range cur.strategies[f.Name] {
			doc.FeatureStrategies = append(doc.FeatureStrategies, Strategy{Name: st.Name, ID: st.ID, FeatureName: f.Name, Title: st.Title,
				Disabled: st.Disabled, Parameters: nonNilMap(st.Parameters),
				Constraints: domain.NonNil(domain.ConstraintInputs(st.Constraints)), Variants: domain.NonNil(domain.VariantInputs(st.Variants)),
				Segments: domain.NonNil(st.Segments)})
			if s := st.Parameters["stickiness"]; s != "" {
				usedContext[s] = true
			}
			for _, c := range st.Constraints {
				usedContext[c.ContextName] = true
			}
			for _, v := range st.Variants {
				markVariant(usedContext, v.Stickiness, v.Overrides)
			}
			for _, id := range st.Segments {
				usedSegments[id] = true
			}
		}
		for _, t := range cur.tags[f.Name] {
			doc.FeatureTags = append(doc.FeatureTags, t)
			usedTagTypes[t.TagType] = true
		}
		if deps := cur.deps[f.Name]; len(deps) > 0 {
			doc.Dependencies = append(doc.Dependencies, FlagDependency{Feature: f.Name, Dependencies: deps})
		}
	}
	fields, err := q.ContextFields()
	if err != nil {
		return doc, err
	}
	for _, c := range fields {
		if usedContext[c.Name] {
			doc.ContextFields = append(doc.ContextFields, ContextField{Name: c.Name, Description: c.Description, Stickiness: c.Stickiness,
				SortOrder: int32(c.SortOrder), LegalValues: domain.NonNil(c.LegalValues)})
		}
	}
	segments, err := q.Segments()
	if err != nil {
		return doc, err
	}
	for _, s := range segments {
		if usedSegments[s.ID] {
			doc.Segments = append(doc.Segments, SegmentRef{ID: s.ID, Name: s.Name})
		}
	}
	types, err := q.TagTypes()
	if err != nil {
		return doc, err
	}
	for _, t := range types {
		if usedTagTypes[t.Name] {
			doc.TagTypes = append(doc.TagTypes, t)
		}
	}
	return doc, nil
}

func markVariant(used map[string]bool, stickiness string, overrides []engine.Override) {
	if stickiness != "" {
		used[stickiness] = true
	}
	for _, o := range overrides {
		used[o.ContextName] = true
	}
}

func nonNilMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}
