package differential

import (
	"cmp"
	"fmt"
	"strings"
)

// Kinds of difference.
const (
	KindStatus   = "status class"
	KindStored   = "stored configuration"
	KindFeatures = "client features"
	KindSDK      = "Node SDK evaluation"
	KindFrontend = "frontend API"
)

// Kinds lists the kinds of difference in report order.
var Kinds = []string{KindStatus, KindStored, KindFeatures, KindSDK, KindFrontend}

// Difference is one way in which Bunting answered otherwise than the
// reference.
type Difference struct {
	Kind string
	// Subject is the flag ("flag f") or segment ("segment 2") concerned,
	// if any.
	Subject string
	// Call is the call after which it appeared, when known.
	Call *Call
	// Follows, when set, is an earlier difference of the same subject this
	// one probably follows from; the report then keeps it short.
	Follows *Difference
	// Detail is a minimal diff.
	Detail string
}

// String describes the difference for a failure message.
func (d *Difference) String() string {
	s := fmt.Sprintf("[%s] %s", d.Kind, d.Subject)
	if d.Call != nil {
		s += ", call " + d.Call.String()
	}
	if f := d.Follows; f != nil {
		first, _, _ := strings.Cut(d.Detail, "\n")
		after := "all calls"
		if f.Call != nil {
			after = fmt.Sprintf("call #%d", f.Call.Index)
		}
		return s + fmt.Sprintf("\n  %s\n  (follows the %s difference after %s)", strings.TrimSpace(first), f.Kind, after)
	}
	return s + "\n" + d.Detail
}

// Report is what one seed's run found.
type Report struct {
	Seed int64
	// Calls is the number of admin calls, Refused how many the reference
	// refused.
	Calls, Refused int
	// FeaturePayloads is the number of client features payloads compared.
	FeaturePayloads int
	// SDKChecks is the number of flag × context pairs compared through the
	// Node SDK (each is an isEnabled and a getVariant), SDKContexts the
	// contexts among them.
	SDKChecks, SDKContexts int
	// FrontendChecks is the number of flag × context pairs compared through
	// the frontend APIs, FrontendContexts the contexts (requests per side).
	FrontendChecks, FrontendContexts int
	// SDKEnabled and FrontendListed count the compared evaluations that
	// were on at the reference (a comparison of only offs proves little).
	SDKEnabled, FrontendListed int
	Differences                []*Difference
	// Notes are observations that are not differences (a call meant to be
	// refused that the reference accepted).
	Notes []string
	// Timings say how long each step took.
	Timings []string
	// Evened counts, per deliberate difference, the frontend comparisons
	// it left out or narrowed to the flag's state, and the Node SDK
	// evaluations it explains.
	Evened map[string]int

	// first is the first difference of each kind and subject.
	first map[[2]string]*Difference
	// refFeatures are the reference's client features, by flag name.
	refFeatures map[string]any
	// refRepeated names the flags whose dependencies the reference's
	// client features repeat (SingleDependencies).
	refRepeated map[string]bool
}

// Count is the number of differences of kind.
func (r *Report) Count(kind string) int {
	n := 0
	for _, d := range r.Differences {
		if d.Kind == kind {
			n++
		}
	}
	return n
}

// Summary is a one-line account of the run.
func (r *Report) Summary() string {
	var kinds []string
	for _, k := range Kinds {
		kinds = append(kinds, fmt.Sprintf("%s %d", k, r.Count(k)))
	}
	var evened []string
	for _, d := range DeliberateDifferences {
		if n := r.Evened[d.Name]; n > 0 {
			evened = append(evened, fmt.Sprintf("%s %d", d.Name, n))
		}
	}
	return fmt.Sprintf("seed %d: %d calls (%d refused by Unleash), %d client features payloads, %d SDK evaluations (%d contexts, %d on), %d frontend evaluations (%d contexts, %d on; deliberate differences evened out: %s); differences: %s; took %s",
		r.Seed, r.Calls, r.Refused, r.FeaturePayloads, r.SDKChecks, r.SDKContexts, r.SDKEnabled, r.FrontendChecks, r.FrontendContexts, r.FrontendListed,
		cmp.Or(strings.Join(evened, ", "), "none"), strings.Join(kinds, ", "), strings.Join(r.Timings, ", "))
}

// add records a difference that follows the difference follows (nil
// when it is a new one).
func (r *Report) add(kind, subject string, call *Call, follows *Difference, format string, args ...any) *Difference {
	d := &Difference{Kind: kind, Subject: subject, Call: call, Follows: follows, Detail: fmt.Sprintf(format, args...)}
	if r.first == nil {
		r.first = map[[2]string]*Difference{}
	}
	if _, ok := r.first[[2]string{kind, subject}]; !ok && subject != "" {
		r.first[[2]string{kind, subject}] = d
	}
	r.Differences = append(r.Differences, d)
	return d
}

// earlier returns the first difference of one of kinds about one of
// subjects, or nil.
func (r *Report) earlier(kinds []string, subjects ...string) *Difference {
	for _, k := range kinds {
		for _, s := range subjects {
			if d := r.first[[2]string{k, s}]; d != nil && s != "" {
				return d
			}
		}
	}
	return nil
}
