// Package domain holds Bunting's operations: every change to flags,
// strategies, variants, segments, tags, context fields, dependencies,
// environments, projects, strategy and feature types, API tokens, service
// accounts and personal tokens, staleness, state import/export, signal
// endpoints with their tokens, action sets, and the people who sign in to
// the web UI with their sessions. The admin HTTP API (internal/server),
// the signal handlers and worker (internal/signals), the web UI's account
// routes, start-up (the first admin and API tokens) and any other caller
// inside the process go through these functions, so each rule is written
// once.
//
// An operation takes the transaction it runs in and the principal it acts
// for:
//
//	err := st.Tx(ctx, func(tx *store.Tx) error {
//		_, _, err := domain.SetEnabled(tx, p, "default", "new-checkout", "production", true, false)
//		return err
//	})
//
// It checks the principal's permission (Principal.Require: 401 without a
// principal, 403 naming the permission), validates its input (400 naming
// the property), makes the change and writes its event in tx, so the change
// and its event commit together or not at all. Errors are apierr errors;
// only the HTTP edge turns them into answers. Inputs are plain structs with
// JSON tags, so the HTTP layer decodes a body straight into them.
//
// Reads that need no rule (lists, single items) stay with their callers,
// which use the store directly; LoadFeatureEnv, StrategyIn and
// LoadFeatureView are shared reads. Sessions write no event, so SignIn,
// SessionPrincipal, SignOut and SignOutEverywhere run on a store.Q.
//
// Files by concept: principal.go (who acts and what they may do),
// featureenv.go (a flag in an environment: on/off, the default strategy,
// variants), strategies.go, features.go, environments.go, projects.go,
// segments.go, dependencies.go, tags.go, contextfields.go,
// strategytypes.go, tokens.go (API tokens and their bootstrap), users.go
// (service accounts, personal tokens, root roles), accounts.go (people,
// passwords, the first admin), sessions.go (sign-in and its rate limit,
// sessions), signals.go (signal endpoints and their tokens), actions.go
// (action sets and action types), stale.go, state.go, versions.go (the
// version of a flag or segment, and If-Match checked in a change's
// transaction), and the
// validation they share (validate.go, jsvalues.go for JavaScript's number
// and date rules, jsonpatch.go).
package domain
