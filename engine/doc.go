// Package engine evaluates Unleash-compatible feature flags.
//
// It is a pure package: no I/O, no logging, no clocks except through
// Options. A ClientFeatures payload is compiled once into an immutable
// Snapshot (numbers, dates, semvers, CIDRs and regexes of constraints parsed,
// segments resolved, hash inputs prepared); a Snapshot is then evaluated many
// times from many goroutines without locks.
//
// # Reading map
//
// Compiling, in compile.go: Compile walks the payload (model.go) once and
// fills a Snapshot (snapshot.go). Each flag becomes a flag record that
// points at ranges of Snapshot.strategies and Snapshot.dependencies. Each
// strategy becomes a strategy (strategy.go): an algorithm, a rollout
// (rollout.go), its variants (variant.go) and its constraint references.
// Each distinct constraint becomes one test shared by every identical
// constraint (constraintTable in intern.go, constraint.go); a reference is
// the test's id shifted left by one, its low bit set when the constraint is
// inverted. Context field names get slots for the per-evaluation field
// cache (field.go). Last, newAllFlagsPlan (evaluate_all.go) reads the
// finished snapshot and plans the all-flags path; nothing changes the
// snapshot after that.
//
// One flag, in evaluate.go:
//
//	Evaluate(name) → EvaluateIndex(i) → evaluateID(i)
//	  isEnabled: off when the flag is disabled, then
//	    satisfied, for each dependency (evaluates the parent the same way)
//	    for each strategy in order, the first that says yes wins:
//	      evalState.allHold(refs): its constraints     (constraint.go)
//	      strategy.decide: its algorithm               (strategy.go, rollout.go)
//	  variantFor: the winner's variants, else the flag's
//	    variantList.choose: override, then weighted hash  (variant.go)
//
// An evalState (state.go) carries the context through one evaluation,
// with its caches: field values and their parsed forms, and, when every
// flag is evaluated, a memo of constraint test outcomes.
//
// Every flag, in evaluate_all.go: EvaluateAll and EvaluateAllIDs share one
// memo and field cache across the flags. Below 64 flags they call
// evaluateID for each flag. From 64, the snapshot's allFlagsPlan runs in
// four steps:
//
//  1. settle.go: the outcome of every constraint test the enabled flags use
//     is settled into the memo up front, grouped by operator and field;
//  2. rounds.go: the flags with strategies are decided in rounds (the
//     first strategy of every flag, then the second of those still
//     undecided, …), strategies sorted by algorithm into batches, and the
//     winners' variants chosen;
//  3. flags without strategies are on, their variants chosen;
//  4. flags with a custom strategy go through evaluateID.
//
// Then, with or without a plan, the flags with dependencies go through
// evaluateID, which reads their parents' outcomes (parents never have
// dependencies, so they are all decided by then). Steps 1 and 2 remove the
// branches that change direction from one flag to the next; they change no
// outcome: the tests compare the two paths on the client specification,
// generated payloads and fuzzed ones. docs/engine.md tells the story at
// more length, with the figures.
package engine
