// Package differential generates seeded random sequences of Unleash admin
// calls, applies one sequence to two servers side by side (the real Unleash
// and Bunting) and compares what they answer, store and serve: the status
// class of every call, the stored configuration of the flag a call changed,
// the client features payload, and evaluations.
//
// A sequence is a pure function of its seed: the generator never looks at
// what a server answered. Identifiers that only a server knows (strategy
// ids, segment ids) appear in calls as placeholders that each server's
// runner replaces with the id that server gave.
package differential

import (
	"fmt"
	"regexp"
	"strings"
)

// Call is one admin API call of a scenario.
type Call struct {
	// Index numbers the call within its scenario, from 0.
	Index int
	// Method and Path say where it goes; Path may hold placeholders.
	Method, Path string
	// Body is the JSON body ("" for none); it may hold placeholders.
	Body string
	// Flag is the flag whose configuration the call changes ("" when it
	// changes no flag, e.g. a segment).
	Flag string
	// Note says in words what the call does.
	Note string
	// Refused says that the generator made the call invalid on purpose:
	// the reference must refuse it.
	Refused bool
	// Refers is another flag the call names (a dependency's parent).
	Refers string
	// Creates names the placeholder the call's answer defines (its "id"),
	// for example "strategy:f03.2" or "segment:1"; empty when none.
	Creates string
}

// String shows the call as it was generated (placeholders unresolved).
func (c Call) String() string {
	s := fmt.Sprintf("#%d %s %s", c.Index, c.Method, c.Path)
	if c.Body != "" {
		s += " " + c.Body
	}
	if c.Note != "" {
		s += "  (" + c.Note + ")"
	}
	return s
}

// Placeholders, as the generator writes them: in a path {kind:name}, in a
// JSON body the string "@kind:name@". Strategies resolve to strings,
// segments to numbers.
const (
	kindStrategy = "strategy"
	kindSegment  = "segment"
)

func strategyRef(name string) string     { return "@" + kindStrategy + ":" + name + "@" }
func segmentRef(n int) string            { return fmt.Sprintf("@%s:%d@", kindSegment, n) }
func strategyPathRef(name string) string { return "{" + kindStrategy + ":" + name + "}" }

var (
	bodyRef = regexp.MustCompile(`"@(\w+):([\w.-]+)@"`)
	pathRef = regexp.MustCompile(`\{(\w+):([\w.-]+)\}`)
)

// IDs are the identifiers one server gave to the placeholders.
type IDs map[string]string

// unresolved stands in for an id the server never gave (the creating call
// failed there): the call then refers to something that does not exist.
const (
	unresolvedStrategy = "00000000-0000-0000-0000-000000000000"
	unresolvedSegment  = "999999"
)

// Resolve replaces the placeholders of path and body with this server's
// ids.
func (ids IDs) Resolve(path, body string) (string, string) {
	path = pathRef.ReplaceAllStringFunc(path, func(m string) string {
		sub := pathRef.FindStringSubmatch(m)
		if id, ok := ids[sub[1]+":"+sub[2]]; ok {
			return id
		}
		if sub[1] == kindSegment {
			return unresolvedSegment
		}
		return unresolvedStrategy
	})
	body = bodyRef.ReplaceAllStringFunc(body, func(m string) string {
		sub := bodyRef.FindStringSubmatch(m)
		id, ok := ids[sub[1]+":"+sub[2]]
		switch {
		case sub[1] == kindSegment && ok:
			return id
		case sub[1] == kindSegment:
			return unresolvedSegment
		case ok:
			return `"` + id + `"`
		}
		return `"` + unresolvedStrategy + `"`
	})
	return path, body
}

// Symbol returns the placeholder name a server id stands for ("" when
// none), so that payloads of both servers can be compared with ids
// replaced by the names the scenario gave them.
func (ids IDs) Symbol(kind, id string) string {
	for k, v := range ids {
		if v == id && strings.HasPrefix(k, kind+":") {
			return strings.TrimPrefix(k, kind+":")
		}
	}
	return ""
}
