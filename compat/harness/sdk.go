package harness

import (
	"fmt"
	"testing"
	"time"
)

// Check asks for one flag's evaluation in one context.
type Check struct {
	Flag    string  `json:"flag"`
	Context Context `json:"context"`
}

// Evaluation is what an SDK answered for a Check: isEnabled and getVariant.
type Evaluation struct {
	Flag    string       `json:"flag"`
	Enabled bool         `json:"enabled"`
	Variant ProxyVariant `json:"variant"`
	// ParentDraws is how many random numbers the Node driver's seeded
	// evaluation drew while evaluating the flag's parents (EvaluateSeeded
	// only).
	ParentDraws int `json:"parentDraws,omitempty"`
}

// SDK is a server-side SDK that evaluates flags locally.
type SDK interface {
	// Evaluate answers every check, in order.
	Evaluate(checks []Check) ([]Evaluation, error)
}

// CaseChecks lists a check for every outcome of c.
func CaseChecks(c Case) []Check {
	checks := make([]Check, len(c.Outcomes))
	for i, o := range c.Outcomes {
		checks[i] = Check{Flag: o.Flag, Context: c.Context}
	}
	return checks
}

// VerifySDKCase compares an SDK's evaluations of c with the expected
// outcomes: enabled state, variant name, variant enabled and payload.
func VerifySDKCase(sdk SDK, c Case) error {
	got, err := sdk.Evaluate(CaseChecks(c))
	if err != nil {
		return fmt.Errorf("case %q: %w", c.Name, err)
	}
	if len(got) != len(c.Outcomes) {
		return fmt.Errorf("case %q: %d answers for %d checks", c.Name, len(got), len(c.Outcomes))
	}
	for i, o := range c.Outcomes {
		e := got[i]
		if e.Enabled != o.Enabled {
			return fmt.Errorf("case %q: %s enabled=%v, want %v", c.Name, o.Flag, e.Enabled, o.Enabled)
		}
		if err := verifyVariant(o, &e.Variant); err != nil {
			return fmt.Errorf("case %q: %w", c.Name, err)
		}
	}
	return nil
}

// CheckSDKScenario waits for the SDK to evaluate the first case right (its
// first fetch may still be under way), then checks every case.
func CheckSDKScenario(t testing.TB, sdk SDK) {
	t.Helper()
	Eventually(t, 15*time.Second, 250*time.Millisecond, "the SDK evaluates the first case", func() error {
		return VerifySDKCase(sdk, Cases[0])
	})
	for _, c := range Cases {
		if err := VerifySDKCase(sdk, c); err != nil {
			t.Error(err)
		}
	}
}

// WaitSDKFlag waits until the SDK evaluates flag to enabled in ctx.
func WaitSDKFlag(t testing.TB, sdk SDK, ctx Context, flag string, enabled bool, timeout time.Duration) {
	t.Helper()
	Eventually(t, timeout, 250*time.Millisecond, fmt.Sprintf("the SDK sees %s enabled=%v", flag, enabled), func() error {
		got, err := sdk.Evaluate([]Check{{Flag: flag, Context: ctx}})
		if err != nil {
			return err
		}
		if len(got) != 1 || got[0].Enabled != enabled {
			return fmt.Errorf("answer %+v", got)
		}
		return nil
	})
}
