package flagsio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/access"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// Options are Bunting's additions to Unleash's import.
type Options struct {
	// Prune archives the project's flags that the document does not list,
	// in the same transaction (`bunting flags apply --prune`).
	Prune bool
}

// Unleash's messages, kept word for word so that tools reading validate's
// answer (Unleash's import dialog) show the same thing.
const (
	msgStrategies    = "We detected the following custom strategy that needs to be created first:"
	msgContextFields = "We detected the following context fields that do not have matching legal values with the imported ones:"
	msgOtherProject  = "You cannot import a features that already exist in other projects. You already have the following features defined outside of project %s:"
	msgDuplicates    = "We detected the following features are duplicate in your import data:"
	msgSegments      = "We detected the following segments that need to be created first:"
	msgDependencies  = "We detected the following dependencies that need to be created first:"
	msgPermissions   = "We detected you are missing the following permissions:"
	warnCustom       = "The following strategy types will be used in import. Please make sure the strategy type parameters are configured as in source environment:"
	warnArchived     = "The following features will not be imported as they are currently archived. To import them, please unarchive them first:"
	warnExisting     = "The following features already exist in this project and will be overwritten:"
	// Bunting's own findings.
	msgNames    = "The following flag names are not valid (URL-friendly, at most 100 characters):"
	msgUnlisted = "The following items refer to flags or segments that the import's features or segments do not list:"
	msgRejected = "Importing would fail:"
)

// errDryRun ends validate's rehearsal transaction, so nothing it did is
// kept.
var errDryRun = errors.New("flagsio: dry run")

// Validate says whether req can be imported as p and what it would do: the
// checks Unleash makes, then the import itself rehearsed in a transaction
// that is rolled back, so that every rule of the domain operations (a
// strategy's parameters, a variant's weights) is reported here too.
func Validate(ctx context.Context, st *store.Store, p *domain.Principal, req ImportRequest) (Validation, error) {
	if err := checkRequest(st.Q(ctx), p, req); err != nil {
		return Validation{}, err
	}
	var v Validation
	err := st.Tx(ctx, func(tx *store.Tx) error {
		var doc Document
		var err error
		if v, doc, err = check(tx.Q, p, req); err != nil {
			return err
		}
		if !v.Ok() {
			return errDryRun
		}
		if err := apply(tx, p, req.Project, req.Environment, doc, Options{}); err != nil {
			var e *apierr.Error
			if !errors.As(err, &e) || e.Kind == apierr.KindInternal || e.Kind >= apierr.KindDatabaseUnavailable {
				return err
			}
			v.Errors = append(v.Errors, Message{Message: msgRejected + " " + e.Message, AffectedItems: []string{}})
		}
		return errDryRun
	})
	if err != nil && !errors.Is(err, errDryRun) {
		return Validation{}, err
	}
	return v, nil
}

// Import imports req as p in tx: refused with 400 and validate's errors
// (403 naming the missing permissions) when it is not valid, otherwise
// every change through domain's operations, and a features-imported event.
func Import(tx *store.Tx, p *domain.Principal, req ImportRequest, opts Options) error {
	if err := checkRequest(tx.Q, p, req); err != nil {
		return err
	}
	v, doc, err := check(tx.Q, p, req)
	if err != nil {
		return err
	}
	if len(v.Errors) > 0 {
		var parts []string
		for _, m := range v.Errors {
			parts = append(parts, m.Message+" "+strings.Join(m.AffectedItems, ", "))
		}
		return apierr.Validation("The import is not valid. %s", strings.Join(parts, " "))
	}
	if len(v.Permissions) > 0 {
		return apierr.Forbidden("You don't have the required permissions to perform this import. You are missing: %s.", strings.Join(v.Permissions[0].AffectedItems, ", "))
	}
	if err := apply(tx, p, req.Project, req.Environment, doc, opts); err != nil {
		return err
	}
	return tx.Event(store.NewEvent{Type: "features-imported", Actor: p.Actor(), Project: req.Project, Environment: req.Environment,
		Data: map[string]any{"project": req.Project, "environment": req.Environment, "features": len(doc.Features)}})
}

// checkRequest refuses a request that names no project, environment or
// data, or ones that do not exist (or that p may not see).
func checkRequest(q store.Q, p *domain.Principal, req ImportRequest) error {
	switch {
	case strings.TrimSpace(req.Project) == "":
		return apierr.Validation("The `project` property is required: the project to import into.")
	case strings.TrimSpace(req.Environment) == "":
		return apierr.Validation("The `environment` property is required: the environment to import into.")
	case req.Data == nil:
		return apierr.Validation("The `data` property is required: the export document to import.")
	}
	if _, err := q.Project(req.Project); err != nil || !p.CanSeeProject(req.Project) {
		if err == nil || apierr.IsKind(err, apierr.KindNotFound) {
			return apierr.Validation("The `project` property names no project: %q does not exist.", req.Project)
		}
		return err
	}
	envs, err := q.ProjectEnvironments(req.Project)
	if err != nil {
		return err
	}
	if !slices.Contains(envs, req.Environment) {
		return apierr.Validation("The `environment` property names no environment of project %q: %q does not exist or is not enabled there.", req.Project, req.Environment)
	}
	for i, f := range req.Data.Features {
		if strings.TrimSpace(f.Name) == "" {
			return apierr.Validation("The `data.features[%d].name` property is required.", i)
		}
	}
	return nil
}

// check finds what Unleash's validate finds, and returns the document as
// the import applies it: archived flags left out, segment ids of the
// document replaced by the ids of the segments here with the same name.
func check(q store.Q, p *domain.Principal, req ImportRequest) (Validation, Document, error) {
	v := Validation{Errors: []Message{}, Warnings: []Message{}, Permissions: []Message{}}
	doc := *req.Data
	project, env := req.Project, req.Environment
	addErr := func(msg string, items []string) {
		if len(items) > 0 {
			v.Errors = append(v.Errors, Message{Message: msg, AffectedItems: items})
		}
	}
	addWarn := func(msg string, items []string) {
		if len(items) > 0 {
			v.Warnings = append(v.Warnings, Message{Message: msg, AffectedItems: items})
		}
	}

	// Flags: archived ones are skipped, others may not live in another
	// project, names must be valid and listed once.
	var archived, other, existing, invalid, duplicates []string
	seen := map[string]bool{}
	kept := []Feature{}
	for _, f := range doc.Features {
		if seen[f.Name] {
			duplicates = appendOnce(duplicates, f.Name)
			continue
		}
		seen[f.Name] = true
		if err := domain.ValidateName("name", f.Name); err != nil {
			invalid = append(invalid, f.Name)
		}
		old, err := q.Feature(f.Name)
		switch {
		case apierr.IsKind(err, apierr.KindNotFound):
		case err != nil:
			return v, doc, err
		case old.Archived:
			archived = append(archived, f.Name)
			continue
		case old.Project != project:
			other = append(other, fmt.Sprintf("%s (in project %s)", f.Name, old.Project))
		default:
			existing = append(existing, f.Name)
		}
		kept = append(kept, f)
	}
	doc.Features = kept
	listed := map[string]bool{}
	for _, f := range kept {
		listed[f.Name] = true
	}
	isArchived := func(name string) bool { return slices.Contains(archived, name) }
	var unlisted []string
	doc.FeatureStrategies = slices.DeleteFunc(slices.Clone(doc.FeatureStrategies), func(s Strategy) bool { return isArchived(s.FeatureName) })
	doc.FeatureEnvironments = slices.DeleteFunc(slices.Clone(doc.FeatureEnvironments), func(e FeatureEnv) bool { return isArchived(e.flag()) })
	doc.FeatureTags = slices.DeleteFunc(slices.Clone(doc.FeatureTags), func(t FeatureTag) bool { return isArchived(t.FeatureName) })
	doc.Dependencies = slices.DeleteFunc(slices.Clone(doc.Dependencies), func(d FlagDependency) bool { return isArchived(d.Feature) })
	for _, s := range doc.FeatureStrategies {
		if !listed[s.FeatureName] {
			unlisted = appendOnce(unlisted, "featureStrategies: "+s.FeatureName)
		}
	}
	for _, e := range doc.FeatureEnvironments {
		if !listed[e.flag()] {
			unlisted = appendOnce(unlisted, "featureEnvironments: "+e.flag())
		}
	}
	for _, t := range doc.FeatureTags {
		if !listed[t.FeatureName] {
			unlisted = appendOnce(unlisted, "featureTags: "+t.FeatureName)
		}
	}
	for _, d := range doc.Dependencies {
		if !listed[d.Feature] {
			unlisted = appendOnce(unlisted, "dependencies: "+d.Feature)
		}
	}

	// Strategy types must exist; custom ones are a warning.
	types, err := q.StrategyTypes()
	if err != nil {
		return v, doc, err
	}
	var unsupported, custom []string
	for _, s := range doc.FeatureStrategies {
		i := slices.IndexFunc(types, func(t store.StrategyType) bool { return t.Name == s.Name })
		switch {
		case i < 0:
			unsupported = appendOnce(unsupported, s.Name)
		case types[i].Editable:
			custom = appendOnce(custom, s.Name)
		}
	}

	// Context fields: an existing one must hold every imported legal value.
	fields, err := q.ContextFields()
	if err != nil {
		return v, doc, err
	}
	var badFields []string
	newFields := 0
	for _, c := range doc.ContextFields {
		i := slices.IndexFunc(fields, func(f store.ContextField) bool { return f.Name == c.Name })
		if i < 0 {
			newFields++
			continue
		}
		for _, lv := range c.LegalValues {
			if !slices.ContainsFunc(fields[i].LegalValues, func(o store.LegalValue) bool { return o.Value == lv.Value }) {
				badFields = appendOnce(badFields, c.Name)
			}
		}
	}

	// Segments are found by name (global ones, or the project's).
	segments, err := q.Segments()
	if err != nil {
		return v, doc, err
	}
	var missingSegments []string
	segmentIDs := map[int]int{}
	for _, s := range doc.Segments {
		i := slices.IndexFunc(segments, func(o store.Segment) bool {
			return o.Name == s.Name && (o.Project == nil || *o.Project == "" || *o.Project == project)
		})
		if i < 0 {
			missingSegments = appendOnce(missingSegments, s.Name)
			continue
		}
		segmentIDs[s.ID] = segments[i].ID
	}
	for i, s := range doc.FeatureStrategies {
		mapped := make([]int, 0, len(s.Segments))
		for _, id := range s.Segments {
			local, ok := segmentIDs[id]
			if !ok {
				if !slices.ContainsFunc(doc.Segments, func(r SegmentRef) bool { return r.ID == id }) {
					unlisted = appendOnce(unlisted, fmt.Sprintf("segment %d of a strategy of %s", id, s.FeatureName))
				}
				continue
			}
			mapped = append(mapped, local)
		}
		s.Segments = mapped
		doc.FeatureStrategies[i] = s
	}

	// Parents must be imported or exist.
	var missingParents []string
	for _, d := range doc.Dependencies {
		for _, parent := range d.Dependencies {
			if listed[parent.Feature] {
				continue
			}
			if _, err := q.Feature(parent.Feature); apierr.IsKind(err, apierr.KindNotFound) {
				missingParents = appendOnce(missingParents, parent.Feature)
			} else if err != nil {
				return v, doc, err
			}
		}
	}

	addErr(msgStrategies, unsupported)
	addErr(msgContextFields, badFields)
	addErr(fmt.Sprintf(msgOtherProject, project), other)
	addErr(msgDuplicates, duplicates)
	addErr(msgNames, invalid)
	addErr(msgSegments, missingSegments)
	addErr(msgDependencies, missingParents)
	addErr(msgUnlisted, unlisted)
	addWarn(warnCustom, custom)
	addWarn(warnArchived, archived)
	addWarn(warnExisting, existing)

	missing, err := missingPermissions(q, p, project, env, doc, len(existing), newFields)
	if err != nil {
		return v, doc, err
	}
	if len(missing) > 0 {
		v.Permissions = append(v.Permissions, Message{Message: msgPermissions, AffectedItems: missing})
	}
	return v, doc, nil
}

// missingPermissions lists (by display name) the permissions the import
// needs in the project and environment that p lacks: Unleash's list, plus
// switching flags and changing dependencies, which Bunting's operations
// check too.
func missingPermissions(q store.Q, p *domain.Principal, project, env string, doc Document, existing, newFields int) ([]string, error) {
	need := []string{domain.PermUpdateFeature}
	types, err := q.TagTypes()
	if err != nil {
		return nil, err
	}
	for _, t := range doc.TagTypes {
		if !slices.ContainsFunc(types, func(o store.TagType) bool { return o.Name == t.Name }) {
			need = append(need, domain.PermCreateTagType)
			break
		}
	}
	if newFields > 0 {
		need = append(need, domain.PermCreateContextField)
	}
	for _, f := range doc.Features {
		if sts, err := q.Strategies(f.Name, env); err != nil {
			return nil, err
		} else if len(sts) > 0 {
			need = append(need, domain.PermDeleteFeatureStrategy)
			break
		}
	}
	if len(doc.FeatureStrategies) > 0 {
		need = append(need, domain.PermCreateFeatureStrategy)
	}
	if slices.ContainsFunc(doc.FeatureEnvironments, func(e FeatureEnv) bool { return len(e.Variants) > 0 }) {
		need = append(need, domain.PermUpdateEnvVariants)
	}
	if len(doc.FeatureEnvironments) > 0 {
		need = append(need, domain.PermUpdateFeatureEnvironment)
	}
	if len(doc.Dependencies) > 0 {
		need = append(need, domain.PermUpdateFeatureDependency)
	}
	if existing < len(doc.Features) {
		need = append(need, domain.PermCreateFeature)
	}
	var missing []string
	for _, perm := range need {
		scopeEnv := ""
		if pm, ok := access.Lookup(perm); ok && pm.Type == access.TypeEnvironment {
			scopeEnv = env
		}
		if !p.Can(perm, project, scopeEnv) {
			name := perm
			if pm, ok := access.Lookup(perm); ok && pm.DisplayName != "" {
				name = pm.DisplayName
			}
			missing = append(missing, name)
		}
	}
	return missing, nil
}

func appendOnce(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// flag is the flag a feature environment belongs to (featureName, or the
// name Unleash repeats it in).
func (e FeatureEnv) flag() string {
	if e.FeatureName != "" {
		return e.FeatureName
	}
	return e.Name
}

// sameJSON compares two values by their JSON, the form the document and
// the admin API share.
func sameJSON(a, b any) bool {
	ja, errA := json.Marshal(a)
	jb, errB := json.Marshal(b)
	return errA == nil && errB == nil && string(ja) == string(jb)
}

// variantsOf is the variants as stored (engine's type), for comparing.
func variantsOf(vs []domain.VariantInput) []engine.Variant {
	out := make([]engine.Variant, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.Variant)
	}
	return out
}
