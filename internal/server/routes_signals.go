package server

// registerSignalsRoutes is where the signals part registers the signal
// endpoint management, ingestion and action routes (internal/signals
// provides the handlers). Keep one line per route, as in routes.go.
func (s *Server) registerSignalsRoutes(r *router) {}
