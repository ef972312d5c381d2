package signals

// EndpointView is a signal endpoint as the API shows it, named for the
// server's OpenAPI document (the other request and response bodies of these
// routes are internal/domain's types).
type EndpointView = endpointView
