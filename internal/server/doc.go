// Package server is Bunting's flag server over HTTP: the admin API, the
// client and frontend APIs for SDKs and proxies, and the operations
// surface (health, metrics, API docs).
//
// # Adding routes
//
// One file per surface lists its routes, one line per route
// (adminapi, sdkapi, opsapi, accounts; routes.go
// puts them together):
//
//	r.Admin("POST /api/admin/projects/{projectId}/features", domain.PermCreateFeature, s.createFeature, withJSON)
//
// r.Public, r.Admin, r.Client and r.Frontend (route.Registrar) choose who may call the route
// (admin routes accept admin API tokens and users with a root role; client
// routes only client tokens; frontend routes only frontend tokens). The
// permission argument ("" = any authenticated caller) is checked by
// requirePermission, which answers 401 AuthenticationRequired or 403
// NoAccessError naming the permission (and the environment with envScoped).
// withJSON makes a route answer 415 to bodies that are not JSON. Handlers
// return an error; it is written once by apierr.Write, so handlers never
// choose status codes for errors. Decode bodies with decodeJSON: malformed
// or mistyped JSON becomes 400 ValidationError naming the property, and a
// body over the limit 413. Text that no database can store (a NUL
// character or invalid UTF-8) is refused with 400 wherever it comes from:
// any string of a body (httpjson), a path value or a query parameter (the
// router, routetable.go). Declare a body property stored in an INTEGER
// column as int32, so the decoder refuses numbers beyond 32 bits. Put
// request values in headers only through httpjson.SetLocation (escaped).
// Server.Routes lists every registered route; the HTTP fuzz test sends
// hostile requests to each, so a new route is covered without more work.
//
// # Changes and events
//
// Handlers do not hold rules. A handler that changes something decodes its
// body, runs one internal/domain operation in a transaction and writes the
// answer:
//
//	err := s.store.Tx(r.Context(), func(tx *store.Tx) (err error) {
//		created, err = domain.AddStrategy(tx, p, project, feature, env, body)
//		return err
//	})
//
// The operation checks the permission again (the route already did, so
// callers outside HTTP, such as signal actions, get the same check),
// validates, changes rows and writes the event in that transaction: the
// change and its event commit together or not at all, and a transaction
// that changed rows without an event is rolled back
// (store.ErrChangeWithoutEvent). Committed events raise the store's
// revision, which invalidates the client-features snapshot and the token
// cache; with several instances on PostgreSQL, Server.Run polls the latest
// event id to see the others' changes.
//
// # Migrations
//
// internal/store/migrations/{sqlite,postgres} hold goose SQL files, one
// directory per dialect, kept in step. Numbering: 00001–00099 server core,
// 00100–00199 server extras, 00200–00299 signals. Queries use $N
// placeholders, BIGINT unix-millisecond timestamps and TEXT JSON on both.
//
// # Permissions
//
// domain.Principal.Can decides: admin tokens and the Admin root role hold every
// permission; Editor all but ADMIN and API-token management; Viewer none
// (it may still call routes registered with permission ""). Permission
// names are the domain.Perm* constants (Unleash's names).
//
// # Tests
//
// servertest starts the real server on loopback on a fresh SQLite file and,
// when TEST_POSTGRES_URL is set, a fresh PostgreSQL database:
// servertest.Run(t, func(t *testing.T, h *servertest.Harness) { ... }).
package server
