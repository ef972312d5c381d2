package flagsio

import (
	"encoding/json"
	"slices"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// apply makes the project's flags in env what doc says, through domain's
// operations as p. What already matches is left alone, so that applying
// the same document twice writes no event the second time (what `bunting
// flags diff` relies on to say "no changes").
func apply(tx *store.Tx, p *domain.Principal, project, env string, doc Document, opts Options) error {
	// What is there now, read once; each step reads again only what an
	// earlier step may have changed.
	cur, err := loadCurrent(tx.Q, env)
	if err != nil {
		return err
	}
	existing, err := tx.Features(project, false)
	if err != nil {
		return err
	}
	flags := map[string]store.Feature{}
	for _, f := range existing {
		flags[f.Name] = f
	}
	for _, f := range doc.Features {
		old, ok := flags[f.Name]
		if err := applyFeature(tx, p, project, f, old, ok); err != nil {
			return flagError(f.Name, err)
		}
	}
	if err := applyTagTypes(tx, p, doc.TagTypes); err != nil {
		return err
	}
	if err := applyContextFields(tx, p, doc.ContextFields); err != nil {
		return err
	}
	envs := map[string]FeatureEnv{}
	for _, e := range doc.FeatureEnvironments {
		envs[e.flag()] = e
	}
	for _, f := range doc.Features {
		fe, hasEnv := envs[f.Name]
		state, known := cur.envs[f.Name]
		changed := false
		steps := []func() error{
			func() error { return applyTags(tx, p, f.Name, cur.tags[f.Name], doc.FeatureTags) },
			func() (err error) {
				changed, err = applyStrategies(tx, p, project, env, f.Name, cur.strategies[f.Name], doc.FeatureStrategies)
				return err
			},
		}
		if hasEnv {
			steps = append(steps, func() error {
				// A new flag's environment, or one whose strategies just
				// changed (removing them may have switched it off), is read
				// again.
				if !known || changed {
					var err error
					if state, err = tx.FeatureEnvironment(f.Name, env); err != nil {
						return err
					}
				}
				if err := applyVariants(tx, p, project, env, fe, state); err != nil {
					return err
				}
				return applyEnabled(tx, p, project, env, fe, state)
			})
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return flagError(f.Name, err)
			}
		}
	}
	for _, f := range doc.Features {
		if err := applyDependencies(tx, p, project, f.Name, cur.deps[f.Name], doc.Dependencies); err != nil {
			return flagError(f.Name, err)
		}
	}
	if opts.Prune {
		return prune(tx, p, project, doc)
	}
	return nil
}

// flagError names the flag in an operation's error, keeping its kind.
func flagError(flag string, err error) error {
	e := apierr.From(err)
	if e.Kind == apierr.KindInternal || e.Kind >= apierr.KindDatabaseUnavailable {
		return err
	}
	out := *e
	out.Message = "Flag " + flag + ": " + e.Message
	return &out
}

// applyFeature creates the flag (old is its state here when exists), or
// updates its metadata when it differs.
func applyFeature(tx *store.Tx, p *domain.Principal, project string, f Feature, old store.Feature, exists bool) error {
	typ := f.Type
	if typ == "" {
		typ = "release"
	}
	desc := f.Description
	if desc != nil && *desc == "" {
		desc = nil
	}
	if !exists {
		created, err := domain.CreateFeature(tx, p, project, domain.CreateFeatureInput{Name: f.Name, Type: typ, Description: desc,
			ImpressionData: f.ImpressionData})
		if err != nil || !f.Stale {
			return err
		}
		old = created
	}
	if old.Type == typ && sameJSON(old.Description, desc) && old.ImpressionData == f.ImpressionData && old.Stale == f.Stale {
		return nil
	}
	return domain.UpdateFeature(tx, p, project, f.Name, domain.UpdateFeatureInput{Type: &typ, Description: desc,
		ImpressionData: &f.ImpressionData, Stale: &f.Stale})
}

func applyTagTypes(tx *store.Tx, p *domain.Principal, types []store.TagType) error {
	for _, t := range types {
		if _, err := tx.TagType(t.Name); err == nil {
			continue
		} else if !apierr.IsKind(err, apierr.KindNotFound) {
			return err
		}
		if _, err := domain.CreateTagType(tx, p, domain.TagTypeInput(t)); err != nil {
			return err
		}
	}
	return nil
}

func applyContextFields(tx *store.Tx, p *domain.Principal, fields []ContextField) error {
	for _, c := range fields {
		if _, err := tx.ContextField(c.Name); err == nil {
			continue
		} else if !apierr.IsKind(err, apierr.KindNotFound) {
			return err
		}
		legal := domain.NonNil(c.LegalValues)
		if _, err := domain.CreateContextField(tx, p, domain.ContextFieldInput{Name: c.Name, Description: c.Description,
			Stickiness: &c.Stickiness, SortOrder: &c.SortOrder, LegalValues: &legal}); err != nil {
			return err
		}
	}
	return nil
}

// applyTags makes the flag's tags the document's (Unleash replaces them
// too).
func applyTags(tx *store.Tx, p *domain.Principal, flag string, current, all []FeatureTag) error {
	var want []store.Tag
	for _, t := range all {
		if t.FeatureName == flag {
			want = append(want, store.Tag{Type: t.TagType, Value: t.TagValue})
		}
	}
	var have []store.Tag
	for _, t := range current {
		have = append(have, store.Tag{Type: t.TagType, Value: t.TagValue})
	}
	var added, removed []store.Tag
	for _, t := range want {
		if !slices.Contains(have, t) && !slices.Contains(added, t) {
			added = append(added, t)
		}
	}
	for _, t := range have {
		if !slices.Contains(want, t) {
			removed = append(removed, t)
		}
	}
	if len(added) == 0 && len(removed) == 0 {
		return nil
	}
	return domain.ChangeFeatureTags(tx, p, flag, added, removed)
}

// strategyKey is a strategy as compared between the document and the
// database: everything but its id.
func strategyKey(name string, title *string, disabled bool, order int, params map[string]string, constraints, variants any, segments []int) string {
	b, _ := json.Marshal([]any{name, title, disabled, order, params, constraints, variants, segments})
	return string(b)
}

// applyStrategies replaces the flag's strategies in env with the
// document's when they differ (Unleash always replaces them). The new ones
// are added before the old ones are removed, so that the flag is not
// switched off in between for having no active strategy.
func applyStrategies(tx *store.Tx, p *domain.Principal, project, env, flag string, have []store.Strategy, all []Strategy) (bool, error) {
	var want []Strategy
	for _, s := range all {
		if s.FeatureName == flag {
			want = append(want, s)
		}
	}
	if len(want) == len(have) {
		same := true
		for i, s := range want {
			h := have[i]
			order := h.SortOrder
			if s.SortOrder != nil {
				order = int(*s.SortOrder)
			}
			if strategyKey(s.Name, s.Title, s.Disabled, order, nonNilMap(s.Parameters), domain.EngineConstraints(s.Constraints), variantsOf(s.Variants), domain.NonNil(s.Segments)) !=
				strategyKey(h.Name, h.Title, h.Disabled, h.SortOrder, nonNilMap(h.Parameters), domain.NonNil(h.Constraints), domain.NonNil(h.Variants), domain.NonNil(h.Segments)) {
				same = false
				break
			}
		}
		if same {
			return false, nil
		}
	}
	for _, s := range want {
		disabled := s.Disabled
		if _, err := domain.AddStrategy(tx, p, project, flag, env, domain.StrategyInput{Name: s.Name, Title: s.Title, Disabled: &disabled,
			SortOrder: s.SortOrder, Constraints: s.Constraints, Parameters: s.Parameters, Variants: s.Variants, Segments: s.Segments}); err != nil {
			return true, err
		}
	}
	for _, h := range have {
		if err := domain.DeleteStrategy(tx, p, project, flag, env, h.ID); err != nil {
			return true, err
		}
	}
	return true, nil
}

func applyVariants(tx *store.Tx, p *domain.Principal, project, env string, fe FeatureEnv, cur store.FeatureEnvironment) error {
	if sameJSON(domain.NonNil(cur.Variants), variantsOf(fe.Variants)) {
		return nil
	}
	if len(cur.Variants) == 0 && len(fe.Variants) == 0 {
		return nil
	}
	_, err := domain.SetVariants(tx, p, project, fe.flag(), env, domain.NonNil(fe.Variants))
	return err
}

func applyEnabled(tx *store.Tx, p *domain.Principal, project, env string, fe FeatureEnv, cur store.FeatureEnvironment) error {
	if cur.Enabled == fe.Enabled {
		return nil
	}
	_, _, err := domain.SetEnabled(tx, p, project, fe.flag(), env, fe.Enabled, false)
	return err
}

// applyDependencies makes the flag's parents the document's. Unleash only
// adds the document's; a flag kept in git loses a parent when its file
// does, so Bunting removes the others too.
func applyDependencies(tx *store.Tx, p *domain.Principal, project, flag string, have []store.Dependency, all []FlagDependency) error {
	want := []store.Dependency{}
	for _, d := range all {
		if d.Feature == flag {
			for _, dep := range d.Dependencies {
				dep.Variants = domain.NonNil(dep.Variants)
				if !dep.Enabled {
					dep.Variants = []string{}
				}
				want = append(want, dep)
			}
		}
	}
	if sameJSON(want, domain.NonNil(have)) {
		return nil
	}
	if len(want) == 0 {
		return domain.DeleteDependencies(tx, p, project, flag)
	}
	for _, dep := range want {
		enabled := dep.Enabled
		if err := domain.AddDependency(tx, p, project, flag, domain.DependencyInput{Feature: dep.Feature, Enabled: &enabled, Variants: dep.Variants}); err != nil {
			return err
		}
	}
	return nil
}

// prune archives the project's flags that doc does not list.
func prune(tx *store.Tx, p *domain.Principal, project string, doc Document) error {
	flags, err := tx.Features(project, false)
	if err != nil {
		return err
	}
	for _, f := range flags {
		if f.Archived || slices.ContainsFunc(doc.Features, func(o Feature) bool { return o.Name == f.Name }) {
			continue
		}
		if err := domain.ArchiveFeature(tx, p, project, f.Name); err != nil {
			return flagError(f.Name, err)
		}
	}
	return nil
}
