package integrations

import (
	"slices"

	"github.com/bunting-flags/bunting/internal/domain"
)

// ProviderDefinition describes a provider as Unleash's addon API lists it
// (addonTypeSchema): its parameters and the events it suggests.
type ProviderDefinition struct {
	Name             string                `json:"name"`
	DisplayName      string                `json:"displayName"`
	DocumentationURL string                `json:"documentationUrl"`
	Description      string                `json:"description"`
	HowTo            string                `json:"howTo,omitempty"`
	Parameters       []ParameterDefinition `json:"parameters"`
	Events           []string              `json:"events"`
}

// ParameterDefinition is one parameter of a provider (addonParameterSchema).
// A sensitive parameter is write-only: answers show it masked and it is
// stored encrypted.
type ParameterDefinition struct {
	Name        string `json:"name"`
	DisplayName string `json:"displayName"`
	Type        string `json:"type"`
	Description string `json:"description,omitempty"`
	Placeholder string `json:"placeholder,omitempty"`
	Required    bool   `json:"required"`
	Sensitive   bool   `json:"sensitive"`
}

// Provider names.
const (
	ProviderWebhook       = "webhook"
	ProviderSlack         = "slack"
	ProviderTeams         = "teams"
	ProviderTeamsWorkflow = "teamsworkflow"
	ProviderDatadog       = "datadog"
)

// featureEvents are the flag events the chat and monitoring providers
// suggest (Unleash's lists, less the event types Bunting never writes).
var featureEvents = []string{
	"feature-created", "feature-updated", "feature-archived", "feature-revived", "feature-stale-on", "feature-stale-off",
	"feature-environment-enabled", "feature-environment-disabled", "feature-strategy-remove", "feature-strategy-update",
	"feature-strategy-add", "feature-metadata-updated", "feature-variants-updated", "feature-project-change",
	"feature-potentially-stale-on",
}

// changeRequestEvents are the change-request events the webhook and
// Teams providers suggest as well.
var changeRequestEvents = []string{
	"change-request-created", "change-request-discarded", "change-added", "change-discarded", "change-request-approved",
	"change-request-approval-added", "change-request-cancelled", "change-request-sent-to-review", "change-request-applied",
	"change-request-scheduled", "change-request-scheduled-application-success", "change-request-scheduled-application-failure",
	"change-request-schedule-suspended",
}

func concat(lists ...[]string) []string {
	var out []string
	for _, l := range lists {
		out = append(out, l...)
	}
	return out
}

const customHeadersHelp = `Extra HTTP headers for every request: a JSON object whose keys and values are strings.`

var customHeaders = ParameterDefinition{Name: "customHeaders", DisplayName: "Extra HTTP headers", Type: "textfield",
	Description: customHeadersHelp, Placeholder: "{\n  \"X-Team\": \"platform\"\n}", Sensitive: true}

var teamsParameters = []ParameterDefinition{
	{Name: "url", DisplayName: "Workflow webhook URL", Type: "url", Required: true, Sensitive: true,
		Description: "The URL of a Teams workflow started by \"When a Teams webhook request is received\" (it posts the card to a channel or a chat)."},
	customHeaders,
}

// providers are the providers, in the order the API lists them.
var providers = []ProviderDefinition{
	{
		Name: ProviderWebhook, DisplayName: "Webhook", DocumentationURL: "https://www.standardwebhooks.com/",
		Description: "POSTs each event to a URL of yours, signed with Standard Webhooks headers.",
		HowTo: "Bunting POSTs the event as JSON (or the body template rendered with Mustache: event, eventJson and eventMarkdown are in scope) to the URL. " +
			"Every request carries webhook-id (the same on every retry), webhook-timestamp and webhook-signature; verify them with any Standard Webhooks library and the signing secret.",
		Parameters: []ParameterDefinition{
			{Name: "url", DisplayName: "Webhook URL", Type: "url", Required: true, Sensitive: true,
				Description: "Where Bunting POSTs. https:// (http:// only for targets the server allows); retried on network errors, time-outs, 429 and 5xx for up to a day."},
			{Name: "contentType", DisplayName: "Content-Type", Type: "text", Placeholder: "application/json",
				Description: "The Content-Type header of each request (application/json when empty)."},
			{Name: "authorization", DisplayName: "Authorization", Type: "text", Sensitive: true,
				Description: "Sent as the Authorization header when set."},
			customHeaders,
			{Name: "bodyTemplate", DisplayName: "Body template", Type: "textfield",
				Placeholder: "{\n  \"event\": \"{{event.type}}\",\n  \"flag\": \"{{event.featureName}}\",\n  \"by\": \"{{event.createdBy}}\",\n  \"json\": {{{eventJson}}}\n}",
				Description: "A Mustache template for the body; without one the body is the event as JSON. {{{eventJson}}} is the whole event as a JSON string, {{eventMarkdown}} a sentence describing it."},
			{Name: "signingSecret", DisplayName: "Signing secret", Type: "text", Sensitive: true, Placeholder: "whsec_…",
				Description: "The Standard Webhooks secret (whsec_ and base64) that signs every request; Bunting generates one, shown once, when you leave it empty."},
		},
		Events: concat(featureEvents, []string{"feature-tagged", "feature-untagged"}, changeRequestEvents),
	},
	{
		Name: ProviderSlack, DisplayName: "Slack", DocumentationURL: "https://api.slack.com/messaging/webhooks",
		Description: "Posts a message about each event to a Slack channel through an incoming webhook.",
		HowTo:       "Create an incoming webhook for your Slack app and paste its URL. Each message says who changed what (flag, project, environment), with a link to the flag when the server's BUNTING_URL is set.",
		Parameters: []ParameterDefinition{
			{Name: "url", DisplayName: "Incoming webhook URL", Type: "url", Required: true, Sensitive: true,
				Description: "https://hooks.slack.com/services/… (it holds the webhook's secret)."},
			{Name: "defaultChannel", DisplayName: "Channel", Type: "text", Placeholder: "releases",
				Description: "Posts to this channel instead of the webhook's own (only legacy webhooks honour it)."},
			{Name: "username", DisplayName: "Username", Type: "text", Placeholder: "Bunting",
				Description: "The name the message is posted under (legacy webhooks)."},
			{Name: "emojiIcon", DisplayName: "Emoji icon", Type: "text", Placeholder: ":triangular_flag_on_post:",
				Description: "The icon of the message (legacy webhooks)."},
			customHeaders,
		},
		Events: featureEvents,
	},
	{
		Name: ProviderTeams, DisplayName: "Microsoft Teams", DocumentationURL: "https://support.microsoft.com/office/create-incoming-webhooks-with-workflows-for-microsoft-teams-8ae491c7-0394-4861-ba59-055e33f75498",
		Description: "Posts an Adaptive Card about each event to Microsoft Teams through a workflow webhook.",
		HowTo:       "In Teams, create a workflow from the template \"Post to a channel when a webhook request is received\" and paste its URL.",
		Parameters:  teamsParameters,
		Events:      concat(featureEvents, changeRequestEvents),
	},
	{
		Name: ProviderTeamsWorkflow, DisplayName: "Microsoft Teams - Workflow", DocumentationURL: "https://support.microsoft.com/office/create-incoming-webhooks-with-workflows-for-microsoft-teams-8ae491c7-0394-4861-ba59-055e33f75498",
		Description: "The same as Microsoft Teams, under the name Unleash gives it (kept so that existing configurations apply unchanged).",
		Parameters:  teamsParameters,
		Events:      concat(featureEvents, changeRequestEvents),
	},
	{
		Name: ProviderDatadog, DisplayName: "Datadog", DocumentationURL: "https://docs.datadoghq.com/api/latest/events/#post-an-event",
		Description: "Sends each event to Datadog's events API, tagged with its project, environment and flag.",
		HowTo:       "Create an API key in Datadog and give your site. The event's text describes the change; its tags are project:, environment:, flag: and event:, plus the flag's own tags.",
		Parameters: []ParameterDefinition{
			{Name: "apiKey", DisplayName: "API key", Type: "text", Required: true, Sensitive: true,
				Description: "A Datadog API key (sent as DD-API-KEY)."},
			{Name: "site", DisplayName: "Site", Type: "text", Placeholder: "datadoghq.com",
				Description: "Your Datadog site: datadoghq.com, us3.datadoghq.com, us5.datadoghq.com, datadoghq.eu, ap1.datadoghq.com, ap2.datadoghq.com or ddog-gov.com."},
			{Name: "url", DisplayName: "Events API URL", Type: "url",
				Description: "Overrides the site: the full URL of the events API (https://api.datadoghq.com/api/v1/events)."},
			{Name: "sourceTypeName", DisplayName: "Source type name", Type: "text",
				Description: "Sent as the event's source_type_name when set."},
			customHeaders,
			{Name: "bodyTemplate", DisplayName: "Text template", Type: "textfield",
				Description: "A Mustache template for the event's text (event is in scope); without one the text describes the change."},
		},
		Events: featureEvents,
	},
}

// datadogSites maps a Datadog site to its events API host.
var datadogSites = map[string]string{
	"datadoghq.com": "api.datadoghq.com", "us3.datadoghq.com": "api.us3.datadoghq.com", "us5.datadoghq.com": "api.us5.datadoghq.com",
	"datadoghq.eu": "api.datadoghq.eu", "ap1.datadoghq.com": "api.ap1.datadoghq.com", "ap2.datadoghq.com": "api.ap2.datadoghq.com",
	"ddog-gov.com": "api.ddog-gov.com", "us2.ddog-gov.com": "api.us2.ddog-gov.com",
}

// Providers returns the provider definitions.
func Providers() []ProviderDefinition { return providers }

// provider finds a provider by name.
func provider(name string) (ProviderDefinition, bool) {
	i := slices.IndexFunc(providers, func(p ProviderDefinition) bool { return p.Name == name })
	if i < 0 {
		return ProviderDefinition{}, false
	}
	return providers[i], true
}

// parameter finds a provider's parameter.
func (p ProviderDefinition) parameter(name string) (ParameterDefinition, bool) {
	i := slices.IndexFunc(p.Parameters, func(d ParameterDefinition) bool { return d.Name == name })
	if i < 0 {
		return ParameterDefinition{}, false
	}
	return p.Parameters[i], true
}

func init() {
	// Every suggested event is one the server knows.
	for _, p := range providers {
		for _, e := range p.Events {
			if !domain.IsEventType(e) {
				panic("integrations: provider " + p.Name + " suggests unknown event type " + e)
			}
		}
	}
}
