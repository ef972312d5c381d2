package server

// registerExtrasRoutes is where the server-extras part registers its routes
// (tags, strategy types, context fields, feature-type lifetimes, user
// profile, service accounts, state export/import, frontend API, docs,
// metrics). Keep one line per route, as in routes.go.
func (s *Server) registerExtrasRoutes(r *router) {}
