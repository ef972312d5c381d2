package harness

import (
	"fmt"
	"testing"
)

// Project and Environment the scenario lives in; the client tokens are
// scoped to them.
const (
	Project     = "default"
	Environment = "development"
)

// The scenario's flags.
const (
	// FlagSimple has the default strategy: on for everyone, no variants.
	FlagSimple = "compat.simple"
	// FlagConstrained is a 100 % rollout constrained to properties.region
	// "eu", with one JSON-payload variant.
	FlagConstrained = "compat.constrained"
	// FlagSegmented is a 100 % rollout limited by the segment "compat-beta"
	// (userId u1 or u2), with one string-payload variant.
	FlagSegmented = "compat.segmented"
	// FlagDisabled has a strategy but its environment is off.
	FlagDisabled = "compat.disabled"
	// FlagUnknown does not exist anywhere.
	FlagUnknown = "compat.unknown"
)

// ScenarioFlags are the configured flags, in creation order.
var ScenarioFlags = []string{FlagSimple, FlagConstrained, FlagSegmented, FlagDisabled}

// Variant outcomes of the scenario.
var (
	BluePayload = Payload{Type: "json", Value: `{"color":"blue"}`}
	GoldPayload = Payload{Type: "string", Value: "gold-tier"}
)

// Context is the evaluation context of one case, in the form every client
// can express.
type Context struct {
	UserID        string            `json:"userId,omitempty"`
	SessionID     string            `json:"sessionId,omitempty"`
	RemoteAddress string            `json:"remoteAddress,omitempty"`
	AppName       string            `json:"appName,omitempty"`
	Environment   string            `json:"environment,omitempty"`
	CurrentTime   string            `json:"currentTime,omitempty"`
	Properties    map[string]string `json:"properties,omitempty"`
}

// Outcome is the expected evaluation of one flag.
type Outcome struct {
	Flag    string
	Enabled bool
	// Variant is the variant name; "disabled" means the fallback variant.
	Variant string
	// Payload is the variant payload, nil when there is none.
	Payload *Payload
}

// VariantEnabled is whether the outcome's variant is a real one (the
// fallback "disabled" variant reports enabled false).
func (o Outcome) VariantEnabled() bool { return o.Variant != "disabled" }

// Case is one context and what every scenario flag must evaluate to in it.
type Case struct {
	Name     string
	Context  Context
	Outcomes []Outcome
}

// Enabled lists the names of the flags enabled in the case.
func (c Case) Enabled() []string {
	var names []string
	for _, o := range c.Outcomes {
		if o.Enabled {
			names = append(names, o.Flag)
		}
	}
	return names
}

func off(flag string) Outcome { return Outcome{Flag: flag, Variant: "disabled"} }

// Cases are the contexts the tests evaluate and their expected outcomes.
var Cases = []Case{
	{
		Name:    "beta user in eu",
		Context: Context{UserID: "u1", SessionID: "s1", Properties: map[string]string{"region": "eu"}},
		Outcomes: []Outcome{
			{Flag: FlagSimple, Enabled: true, Variant: "disabled"},
			{Flag: FlagConstrained, Enabled: true, Variant: "blue", Payload: &BluePayload},
			{Flag: FlagSegmented, Enabled: true, Variant: "gold", Payload: &GoldPayload},
			off(FlagDisabled),
			off(FlagUnknown),
		},
	},
	{
		Name:    "beta user in us",
		Context: Context{UserID: "u2", SessionID: "s2", Properties: map[string]string{"region": "us"}},
		Outcomes: []Outcome{
			{Flag: FlagSimple, Enabled: true, Variant: "disabled"},
			off(FlagConstrained),
			{Flag: FlagSegmented, Enabled: true, Variant: "gold", Payload: &GoldPayload},
			off(FlagDisabled),
			off(FlagUnknown),
		},
	},
	{
		Name:    "other user in eu",
		Context: Context{UserID: "u3", SessionID: "s3", Properties: map[string]string{"region": "eu"}},
		Outcomes: []Outcome{
			{Flag: FlagSimple, Enabled: true, Variant: "disabled"},
			{Flag: FlagConstrained, Enabled: true, Variant: "blue", Payload: &BluePayload},
			off(FlagSegmented),
			off(FlagDisabled),
			off(FlagUnknown),
		},
	},
	{
		Name:    "anonymous",
		Context: Context{SessionID: "s4"},
		Outcomes: []Outcome{
			{Flag: FlagSimple, Enabled: true, Variant: "disabled"},
			off(FlagConstrained),
			off(FlagSegmented),
			off(FlagDisabled),
			off(FlagUnknown),
		},
	},
}

// ApplyScenario configures the scenario on an upstream through its admin API.
func ApplyScenario(t testing.TB, a *Admin) {
	t.Helper()
	segment := a.CreateSegment(t, "compat-beta", []Constraint{{ContextName: "userId", Operator: "IN", Values: []string{"u1", "u2"}}})

	a.CreateFeature(t, Project, FlagSimple)
	a.AddStrategy(t, Project, FlagSimple, Environment, Strategy{Name: "default"})
	a.SetEnabled(t, Project, FlagSimple, Environment, true)

	a.CreateFeature(t, Project, FlagConstrained)
	a.AddStrategy(t, Project, FlagConstrained, Environment, Strategy{
		Name:        "flexibleRollout",
		Parameters:  rollout(FlagConstrained, 100),
		Constraints: []Constraint{{ContextName: "region", Operator: "IN", Values: []string{"eu", "uk"}}},
		Variants:    []Variant{{Name: "blue", Weight: 1000, WeightType: "variable", Stickiness: "default", Payload: &BluePayload}},
	})
	a.SetEnabled(t, Project, FlagConstrained, Environment, true)

	a.CreateFeature(t, Project, FlagSegmented)
	a.AddStrategy(t, Project, FlagSegmented, Environment, Strategy{
		Name:       "flexibleRollout",
		Parameters: rollout(FlagSegmented, 100),
		Segments:   []int{segment},
		Variants:   []Variant{{Name: "gold", Weight: 1000, WeightType: "variable", Stickiness: "default", Payload: &GoldPayload}},
	})
	a.SetEnabled(t, Project, FlagSegmented, Environment, true)

	a.CreateFeature(t, Project, FlagDisabled)
	a.AddStrategy(t, Project, FlagDisabled, Environment, Strategy{Name: "default"})
}

// AddSwitchFlag creates a flag that is on for everyone; tests use it to see a
// change arrive, then switch it off again with Admin.SetEnabled.
func AddSwitchFlag(t testing.TB, a *Admin, name string) {
	t.Helper()
	a.CreateFeature(t, Project, name)
	a.AddStrategy(t, Project, name, Environment, Strategy{Name: "flexibleRollout", Parameters: rollout(name, 100)})
	a.SetEnabled(t, Project, name, Environment, true)
}

func rollout(groupID string, percent int) map[string]string {
	return map[string]string{"rollout": fmt.Sprint(percent), "stickiness": "default", "groupId": groupID}
}
