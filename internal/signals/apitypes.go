package signals

// The request and response bodies of the signal endpoint and action
// routes, named for the server's OpenAPI document.
type (
	// EndpointBody is the create/update request of a signal endpoint.
	EndpointBody = endpointBody
	// EndpointView is a signal endpoint as the API shows it.
	EndpointView = endpointView
	// TokenBody is the create/rename request of an endpoint token.
	TokenBody = tokenBody
	// CreatedToken is an endpoint token with its secret.
	CreatedToken = createdToken
	// ActionSetBody is the create/update request of an action set.
	ActionSetBody = actionSetBody
	// ActionDefinition describes an action type (…/actions/config).
	ActionDefinition = actionDefinition
)
