package adminapi

import (
	"context"
	"encoding/json"
	"maps"
	"net/http"
	"strconv"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/httpjson"
	"github.com/bunting-flags/bunting/internal/server/sdkapi"
	"github.com/bunting-flags/bunting/internal/store"
	"github.com/bunting-flags/bunting/internal/wire"
)

// The playground (POST /api/admin/playground, the shape of Unleash's):
// every flag of an environment evaluated for one context, with why. The
// flags come from the same client snapshot SDKs are served from (built
// with the disabled strategies and strategy ids kept), compiled as the
// frontend API compiles them, and each is explained by engine.Explain, so
// the playground and the SDKs cannot disagree. Read-only: no event.

// playgroundRequest is the body: {"environment", "projects", "context"}.
// The context is read by the frontend API's parser (wire.ParsePostBody).
type playgroundRequest struct {
	Environment   string          `json:"environment"`
	Projects      json.RawMessage `json:"projects"`
	ChangeRequest *int64          `json:"changeRequest"`
}

// PlaygroundInput is the request as understood, echoed in the answer.
type PlaygroundInput struct {
	Environment string         `json:"environment"`
	Projects    any            `json:"projects"`
	Context     map[string]any `json:"context"`
	// ChangeRequest evaluates as if that open change request were applied
	// (also ?changeRequest={id}); nothing is changed.
	ChangeRequest *int64 `json:"changeRequest,omitempty"`
}

// PlaygroundResponse is the playground's answer (the web UI decodes it
// too): the input as understood and every flag's explained result.
type PlaygroundResponse struct {
	Input    PlaygroundInput     `json:"input"`
	Features []PlaygroundFeature `json:"features"`
}

// PlaygroundFeature is one flag's result for the context.
type PlaygroundFeature struct {
	Name                          string                 `json:"name"`
	ProjectID                     string                 `json:"projectId"`
	IsEnabled                     bool                   `json:"isEnabled"`
	IsEnabledInCurrentEnvironment bool                   `json:"isEnabledInCurrentEnvironment"`
	HasUnsatisfiedDependency      bool                   `json:"hasUnsatisfiedDependency"`
	Dependencies                  []PlaygroundDependency `json:"dependencies"`
	Strategies                    PlaygroundStrategies   `json:"strategies"`
	Variant                       PlaygroundVariant      `json:"variant"`
	Variants                      []engine.Variant       `json:"variants"`
}

// PlaygroundStrategies is a flag's strategies with their overall result.
type PlaygroundStrategies struct {
	// Result is true, false, or "unknown" (a strategy Bunting cannot
	// evaluate might have said yes).
	Result any                  `json:"result"`
	Data   []PlaygroundStrategy `json:"data"`
}

// PlaygroundStrategy is one strategy with what it decided.
type PlaygroundStrategy struct {
	ID          string                 `json:"id"`
	Name        string                 `json:"name"`
	Title       *string                `json:"title,omitempty"`
	Disabled    bool                   `json:"disabled"`
	Parameters  engine.Parameters      `json:"parameters"`
	Result      PlaygroundResult       `json:"result"`
	Constraints []PlaygroundConstraint `json:"constraints"`
	Segments    []PlaygroundSegment    `json:"segments"`
}

// PlaygroundResult is what one strategy decided.
type PlaygroundResult struct {
	// Enabled is a boolean, or "unknown" with evaluationStatus
	// "incomplete" for a strategy Bunting does not know whose
	// constraints hold.
	Enabled          any                `json:"enabled"`
	EvaluationStatus string             `json:"evaluationStatus"`
	Variant          *PlaygroundVariant `json:"variant,omitempty"`
}

// PlaygroundConstraint is a constraint with its result and, beyond
// Unleash's shape, the context's value of its field (absent when the
// context lacks the field).
type PlaygroundConstraint struct {
	ContextName     string   `json:"contextName"`
	Operator        string   `json:"operator"`
	Values          []string `json:"values"`
	Value           string   `json:"value,omitempty"`
	CaseInsensitive bool     `json:"caseInsensitive"`
	Inverted        bool     `json:"inverted"`
	Result          bool     `json:"result"`
	ContextValue    *string  `json:"contextValue,omitempty"`
}

// PlaygroundSegment is one segment of a strategy with its constraints' results.
type PlaygroundSegment struct {
	ID          int                    `json:"id"`
	Name        string                 `json:"name"`
	Result      bool                   `json:"result"`
	Constraints []PlaygroundConstraint `json:"constraints"`
}

// PlaygroundDependency is one parent flag the flag depends on, and whether the dependency holds.
type PlaygroundDependency struct {
	Feature       string   `json:"feature"`
	Enabled       bool     `json:"enabled"`
	Variants      []string `json:"variants"`
	Result        bool     `json:"result"`
	ParentEnabled bool     `json:"parentEnabled"`
	ParentVariant string   `json:"parentVariant,omitempty"`
}

// PlaygroundVariant is the variant chosen.
type PlaygroundVariant struct {
	Name    string                 `json:"name"`
	Enabled bool                   `json:"enabled"`
	Payload *engine.VariantPayload `json:"payload,omitempty"`
}

func (s *API) playground(w http.ResponseWriter, r *http.Request) error {
	body, err := httpjson.ReadBody(r, 0)
	if err != nil {
		return err
	}
	var req playgroundRequest
	if err := httpjson.DecodeBody(body, &req); err != nil {
		return err
	}
	var ctx engine.Context
	if _, err := wire.ParsePostBody(body, &ctx, nil); err != nil {
		return err
	}
	projects, echo, err := playgroundProjects(req.Projects)
	if err != nil {
		return err
	}
	if req.Environment == "" {
		return apierr.Validation("The `environment` property is required: the environment whose flags to evaluate.")
	}
	crID, err := playgroundChangeRequest(r, req.ChangeRequest)
	if err != nil {
		return err
	}
	var data *store.ClientData
	read := func(q store.Q) (err error) {
		data, err = s.store.ClientData(q)
		return err
	}
	if crID != nil {
		if s.ChangeRequests == nil {
			return apierr.Validation("Change requests are not available on this server.")
		}
		err = s.ChangeRequests.Preview(r.Context(), domain.PrincipalFrom(r.Context()), "", *crID, read)
	} else {
		err = read(s.store.Q(r.Context()))
	}
	if err != nil {
		return err
	}
	snap, ok := sdkapi.Explained(data, &domain.Principal{Environment: req.Environment, Projects: projects})
	if !ok {
		return apierr.Validation("The environment %q does not exist.", req.Environment)
	}
	if ctx.Environment == "" {
		ctx.Environment = req.Environment
	}
	out := PlaygroundResponse{Input: PlaygroundInput{Environment: req.Environment, Projects: echo, Context: contextJSON(&ctx), ChangeRequest: crID}, Features: []PlaygroundFeature{}}
	if len(projects) > 0 {
		caller := domain.PrincipalFrom(r.Context())
		for i := range snap.Len() {
			f := snap.Features().Features[i]
			if !caller.CanSeeProject(f.Project) {
				continue // a private project's flags are its members' only
			}
			out.Features = append(out.Features, playgroundAnswer(f, snap.Explain(i, &ctx)))
		}
	}
	return httpjson.Write(w, http.StatusOK, out)
}

// playgroundProjects reads "projects": "*" (or absent) for every project,
// or a list of project ids. It returns the filter and its echo.
func playgroundProjects(raw json.RawMessage) ([]string, any, error) {
	if len(raw) == 0 || string(raw) == "null" {
		return []string{"*"}, "*", nil
	}
	var all string
	if json.Unmarshal(raw, &all) == nil && all == "*" {
		return []string{"*"}, "*", nil
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, nil, apierr.Validation("The `projects` property must be \"*\" or a list of project ids.")
	}
	return list, list, nil
}

// contextJSON is the context as the answer echoes it.
func contextJSON(ctx *engine.Context) map[string]any {
	out := map[string]any{}
	for k, v := range map[string]string{"userId": ctx.UserID, "sessionId": ctx.SessionID, "remoteAddress": ctx.RemoteAddress,
		"environment": ctx.Environment, "appName": ctx.AppName, "currentTime": ctx.CurrentTime} {
		if v != "" {
			out[k] = v
		}
	}
	if len(ctx.Properties) > 0 {
		out["properties"] = maps.Clone(ctx.Properties)
	}
	return out
}

// playgroundAnswer shapes one flag's explanation.
func playgroundAnswer(f engine.Feature, ex engine.FlagExplanation) PlaygroundFeature {
	pf := PlaygroundFeature{
		Name: f.Name, ProjectID: f.Project, IsEnabled: ex.Enabled, IsEnabledInCurrentEnvironment: ex.FlagEnabled,
		HasUnsatisfiedDependency: !ex.DependenciesSatisfied, Dependencies: []PlaygroundDependency{},
		Strategies: PlaygroundStrategies{Data: []PlaygroundStrategy{}},
		Variant:    PlaygroundVariant{Name: ex.Variant.Name, Enabled: ex.Variant.Enabled, Payload: ex.Variant.Payload},
		Variants:   domain.NonNil(f.Variants),
	}
	for _, d := range ex.Dependencies {
		pf.Dependencies = append(pf.Dependencies, PlaygroundDependency{Feature: d.Dependency.Feature,
			Enabled: d.Dependency.Enabled == nil || *d.Dependency.Enabled, Variants: domain.NonNil(d.Dependency.Variants),
			Result: d.Satisfied, ParentEnabled: d.ParentEnabled, ParentVariant: d.ParentVariant})
	}
	var result any = ex.Winner >= 0 || len(ex.Strategies) == 0
	for _, se := range ex.Strategies {
		ps := PlaygroundStrategy{ID: se.Strategy.ID, Name: se.Strategy.Name, Title: se.Strategy.Title, Disabled: se.Strategy.Disabled,
			Parameters: se.Strategy.Parameters, Constraints: playgroundConstraints(se.Constraints), Segments: []PlaygroundSegment{}}
		if ps.Parameters == nil {
			ps.Parameters = engine.Parameters{}
		}
		ps.Result = PlaygroundResult{Enabled: se.Enabled, EvaluationStatus: "complete"}
		if !se.Known && se.ConstraintsHold {
			ps.Result = PlaygroundResult{Enabled: "unknown", EvaluationStatus: "incomplete"}
			if result == false && !se.Strategy.Disabled {
				result = "unknown"
			}
		}
		if se.Variant != nil {
			ps.Result.Variant = &PlaygroundVariant{Name: se.Variant.Name, Enabled: se.Variant.Enabled, Payload: se.Variant.Payload}
		}
		for _, sg := range se.Segments {
			ps.Segments = append(ps.Segments, PlaygroundSegment{ID: sg.ID, Name: sg.Name, Result: sg.Holds,
				Constraints: playgroundConstraints(sg.Constraints)})
		}
		pf.Strategies.Data = append(pf.Strategies.Data, ps)
	}
	pf.Strategies.Result = result
	return pf
}

func playgroundConstraints(cs []engine.ConstraintExplanation) []PlaygroundConstraint {
	out := make([]PlaygroundConstraint, len(cs))
	for k, c := range cs {
		out[k] = PlaygroundConstraint{ContextName: c.Constraint.ContextName, Operator: c.Constraint.Operator,
			Values: domain.NonNil(c.Constraint.Values), Value: c.Constraint.Value, CaseInsensitive: c.Constraint.CaseInsensitive,
			Inverted: c.Constraint.Inverted, Result: c.Holds}
		if c.Present {
			v := c.Value
			out[k].ContextValue = &v
		}
	}
	return out
}

// playgroundChangeRequest reads the change request to evaluate as if
// applied: the body's changeRequest or the changeRequest query parameter.
func playgroundChangeRequest(r *http.Request, body *int64) (*int64, error) {
	v := r.URL.Query().Get("changeRequest")
	if v == "" {
		if body != nil && *body < 1 {
			return nil, apierr.Validation("The `changeRequest` property must be a change request id (a positive whole number); you sent %d.", *body)
		}
		return body, nil
	}
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id < 1 {
		return nil, apierr.Validation("The `changeRequest` query parameter must be a change request id (a positive whole number); you sent %q.", v)
	}
	return &id, nil
}

// ChangeRequestPreviewer evaluates reads as if a change request were
// applied, then rolls everything back (internal/changerequests).
type ChangeRequestPreviewer interface {
	Preview(ctx context.Context, p *domain.Principal, project string, id int64, read func(q store.Q) error) error
}
