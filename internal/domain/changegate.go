package domain

import (
	"sync/atomic"

	"github.com/bunting-flags/bunting/internal/store"
)

// ChangeGate decides whether a principal may change an environment's
// configuration directly (a flag's switch, strategies, variants, archiving,
// dependencies, the segments its strategies use) or must go through a
// change request. internal/changerequests owns the rule and its setting;
// domain asks it from every operation that makes such a change, so the
// admin API, the web UI, signal actions and state imports all meet it.
type ChangeGate interface {
	// AllowDirectChange returns nil when p may change envs of project
	// directly (every environment of the project when envs is empty), and
	// otherwise the error to answer.
	AllowDirectChange(q store.Q, p *Principal, project string, envs []string) error
}

var changeGate atomic.Pointer[ChangeGate]

// SetChangeGate installs the gate (at start-up; nil removes it).
func SetChangeGate(g ChangeGate) {
	if g == nil {
		changeGate.Store(nil)
		return
	}
	changeGate.Store(&g)
}

// gateChange asks the installed gate whether p may change envs of project
// directly (every environment when none is named).
func gateChange(q store.Q, p *Principal, project string, envs ...string) error {
	g := changeGate.Load()
	if g == nil || project == "" {
		return nil
	}
	return (*g).AllowDirectChange(q, p, project, envs)
}

// gateSegment asks the gate about every project environment whose
// strategies use segment id, and about the segment's own project.
func gateSegment(q store.Q, p *Principal, id int, project *string) error {
	if changeGate.Load() == nil {
		return nil
	}
	uses, err := q.SegmentEnvironments(id)
	if err != nil {
		return err
	}
	for _, u := range uses {
		if err := gateChange(q, p, u.Project, u.Environment); err != nil {
			return err
		}
	}
	if project != nil {
		return gateChange(q, p, *project)
	}
	return nil
}
