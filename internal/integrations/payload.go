package integrations

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/bunting-flags/bunting/internal/store"
)

// request is one delivery's HTTP request.
type request struct {
	url    *url.URL
	header http.Header
	body   []byte
}

// maxBody bounds a rendered body.
const maxBody = 1 << 20

// buildError is a request that cannot be built from the configuration
// (a template that does not render, a bad URL): retrying cannot help.
type buildError struct{ msg string }

func (e *buildError) Error() string { return e.msg }

func buildFailed(format string, args ...any) error {
	return &buildError{msg: fmt.Sprintf(format, args...)}
}

// build makes the request that delivers ev to an integration of provider
// with params (plain and secret ones together), as delivery id at at.
func (s *Service) build(provider string, params map[string]string, ev store.Event, id string, at time.Time) (request, error) {
	var (
		r   request
		err error
	)
	r.header = http.Header{}
	r.header.Set("User-Agent", "Bunting-Integrations")
	target := params["url"]
	switch provider {
	case ProviderWebhook:
		r.body, err = s.webhookBody(params["bodyTemplate"], ev)
		ct := params["contentType"]
		if ct == "" {
			ct = "application/json"
		}
		r.header.Set("Content-Type", ct)
		if a := params["authorization"]; a != "" {
			r.header.Set("Authorization", a)
		}
	case ProviderSlack:
		r.body, err = json.Marshal(slackMessage(summarize(ev, s.baseURL), ev, params))
		r.header.Set("Content-Type", "application/json")
	case ProviderTeams, ProviderTeamsWorkflow:
		r.body, err = json.Marshal(teamsMessage(summarize(ev, s.baseURL), ev))
		r.header.Set("Content-Type", "application/json")
	case ProviderDatadog:
		var body datadogEvent
		if body, err = datadogBody(summarize(ev, s.baseURL), ev, params); err == nil {
			r.body, err = json.Marshal(body)
		}
		r.header.Set("Content-Type", "application/json")
		r.header.Set("DD-API-KEY", params["apiKey"])
		if target == "" {
			site := params["site"]
			if site == "" {
				site = "datadoghq.com"
			}
			target = "https://" + datadogSites[site] + "/api/v1/events"
		}
	default:
		return r, buildFailed("unknown provider %q", provider)
	}
	if err != nil {
		return r, err
	}
	if len(r.body) > maxBody {
		return r, buildFailed("the body would be %d bytes, more than the %d allowed", len(r.body), maxBody)
	}
	if r.url, err = s.targets.parse(target); err != nil {
		return r, buildFailed("the target URL is refused: %s", err.Error())
	}
	if h := params["customHeaders"]; h != "" {
		extra, err := parseHeaders(h)
		if err != nil {
			return r, buildFailed("the customHeaders parameter is refused: %s", err.Error())
		}
		for k, v := range extra {
			r.header.Set(k, v)
		}
	}
	if provider == ProviderWebhook {
		r.header.Set("webhook-id", id)
		if sec := params["signingSecret"]; sec != "" {
			if err := sign(r.header, sec, id, at, r.body); err != nil {
				return r, buildFailed("the signing secret is refused: %s", err.Error())
			}
		}
	}
	return r, nil
}

// sign adds the Standard Webhooks headers: webhook-timestamp and
// webhook-signature ("v1," and the base64 HMAC-SHA256 of
// "id.timestamp.body" keyed with the secret's decoded bytes).
func sign(h http.Header, secret, id string, at time.Time, body []byte) error {
	if _, err := signingKey(secret); err != nil {
		return err
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		return err
	}
	sig, err := wh.Sign(id, at, body)
	if err != nil {
		return err
	}
	h.Set("webhook-timestamp", strconv.FormatInt(at.Unix(), 10))
	h.Set("webhook-signature", sig)
	return nil
}

// signingKey checks a Standard Webhooks secret (whsec_ and the base64 of
// 24 to 64 bytes) and returns its key.
func signingKey(secret string) ([]byte, error) {
	rest, ok := strings.CutPrefix(secret, "whsec_")
	if !ok {
		return nil, errors.New("a Standard Webhooks secret starts with whsec_")
	}
	key, err := base64.StdEncoding.DecodeString(rest)
	if err != nil {
		return nil, errors.New("what follows whsec_ must be standard base64")
	}
	if len(key) < 24 || len(key) > 64 {
		return nil, fmt.Errorf("the key must be 24 to 64 bytes (it is %d)", len(key))
	}
	return key, nil
}

// webhookBody is the event as JSON, or the body template rendered with
// event, eventJson and eventMarkdown in scope (as Unleash's webhook).
func (s *Service) webhookBody(template string, ev store.Event) ([]byte, error) {
	eventJSON, err := json.Marshal(ev)
	if err != nil {
		return nil, err
	}
	if len(template) <= 1 { // Unleash ignores a template of one character
		return eventJSON, nil
	}
	tmpl, err := parseTemplate(template)
	if err != nil {
		return nil, buildFailed("the body template does not parse: %s", err.Error())
	}
	var event map[string]any
	if err := json.Unmarshal(eventJSON, &event); err != nil {
		return nil, err
	}
	// eventJson is the event's JSON as a JSON string (quotes included), so
	// {{{eventJson}}} is a valid JSON value inside a JSON template.
	quoted, _ := json.Marshal(string(eventJSON))
	markdownText := summarize(ev, s.baseURL).sentence(markdown)
	const placeholder = "@@bunting-event-markdown-7f3a@@" // left alone by HTML escaping
	out, err := tmpl.Render(map[string]any{"event": event, "eventJson": string(quoted), "eventMarkdown": placeholder})
	if err != nil {
		return nil, buildFailed("the body template does not render: %s", err.Error())
	}
	if len(out) > maxBody {
		return nil, buildFailed("the body template renders %d bytes, more than the %d allowed", len(out), maxBody)
	}
	// eventMarkdown goes into the body as it is, or escaped as the content
	// of a JSON string where the template put it between double quotes.
	escaped, _ := json.Marshal(markdownText)
	inner := string(escaped[1 : len(escaped)-1])
	var b strings.Builder
	for {
		i := strings.Index(out, placeholder)
		if i < 0 {
			b.WriteString(out)
			break
		}
		b.WriteString(out[:i])
		if insideJSONString(b.String()) {
			b.WriteString(inner)
		} else {
			b.WriteString(markdownText)
		}
		out = out[i+len(placeholder):]
	}
	return []byte(b.String()), nil
}

// insideJSONString reports whether text ends inside a double-quoted
// string (counting unescaped quotes).
func insideJSONString(text string) bool {
	in, escaped := false, false
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case escaped:
			escaped = false
		case c == '\\':
			escaped = true
		case c == '"':
			in = !in
		}
	}
	return in
}

// reservedHeaders may not be set by customHeaders: the signature's, and
// what the HTTP client owns.
var reservedHeaders = []string{"webhook-id", "webhook-timestamp", "webhook-signature", "content-length", "host",
	"transfer-encoding", "connection", "te", "upgrade", "trailer", "keep-alive", "proxy-connection"}

// parseHeaders reads customHeaders: a JSON object of string values whose
// keys are header names.
func parseHeaders(text string) (map[string]string, error) {
	var m map[string]any
	d := json.NewDecoder(strings.NewReader(text))
	if err := d.Decode(&m); err != nil || d.More() {
		return nil, errors.New("it must be a JSON object whose values are strings, e.g. {\"X-Team\": \"platform\"}")
	}
	out := map[string]string{}
	for k, v := range m {
		s, ok := v.(string)
		if !ok {
			return nil, fmt.Errorf("the value of %q must be a string", k)
		}
		if !validHeaderName(k) {
			return nil, fmt.Errorf("%q is not a valid header name", k)
		}
		if slices.Contains(reservedHeaders, strings.ToLower(k)) {
			return nil, fmt.Errorf("the header %s is set by Bunting and cannot be replaced", k)
		}
		if strings.ContainsAny(s, "\r\n\x00") {
			return nil, fmt.Errorf("the value of %s must not contain line breaks or NUL", k)
		}
		out[k] = s
	}
	return out, nil
}

// validHeaderName reports whether s is an HTTP token.
func validHeaderName(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// Slack: an incoming-webhook message in Block Kit
// (https://api.slack.com/messaging/webhooks, https://api.slack.com/block-kit).

type slackText struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

type slackBlock struct {
	Type     string
	Text     *slackText
	Elements []any
}

// MarshalJSON leaves out a block's empty text.
func (b slackBlock) MarshalJSON() ([]byte, error) {
	m := map[string]any{"type": b.Type}
	if b.Text != nil {
		m["text"] = b.Text
	}
	if len(b.Elements) > 0 {
		m["elements"] = b.Elements
	}
	return json.Marshal(m)
}

type slackPayload struct {
	Text      string       `json:"text"`
	Blocks    []slackBlock `json:"blocks"`
	Channel   string       `json:"channel,omitempty"`
	Username  string       `json:"username,omitempty"`
	IconEmoji string       `json:"icon_emoji,omitempty"`
}

func slackMessage(s summary, ev store.Event, params map[string]string) slackPayload {
	p := slackPayload{
		Text:      truncate(s.sentence(plain), 3000),
		Username:  params["username"],
		IconEmoji: params["emojiIcon"],
	}
	if ch := params["defaultChannel"]; ch != "" {
		if !strings.HasPrefix(ch, "#") && !strings.HasPrefix(ch, "@") {
			ch = "#" + ch
		}
		p.Channel = ch
	}
	p.Blocks = append(p.Blocks, slackBlock{Type: "section", Text: &slackText{Type: "mrkdwn", Text: truncate(s.sentence(slackMrkdwn), 3000)}})
	context := escapeSlack(ev.Type) + " · " + ev.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC")
	p.Blocks = append(p.Blocks, slackBlock{Type: "context", Elements: []any{slackText{Type: "mrkdwn", Text: context}}})
	if s.Link != "" {
		p.Blocks = append(p.Blocks, slackBlock{Type: "actions", Elements: []any{
			map[string]any{"type": "button", "text": slackText{Type: "plain_text", Text: "Open in Bunting"}, "url": s.Link},
		}})
	}
	return p
}

// Microsoft Teams: an Adaptive Card in the message a workflow webhook
// takes ("Post to a channel when a webhook request is received").

type teamsFact struct {
	Title string `json:"title"`
	Value string `json:"value"`
}

func teamsMessage(s summary, ev store.Event) map[string]any {
	facts := []teamsFact{{"Who", s.Actor}}
	if s.Flag != "" {
		facts = append(facts, teamsFact{"Flag", s.Flag})
	}
	if s.Project != "" {
		facts = append(facts, teamsFact{"Project", s.Project})
	}
	if s.Env != "" {
		facts = append(facts, teamsFact{"Environment", s.Env})
	}
	facts = append(facts, teamsFact{"Event", ev.Type}, teamsFact{"When", ev.CreatedAt.UTC().Format("2006-01-02 15:04:05 UTC")})
	card := map[string]any{
		"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
		"type":    "AdaptiveCard",
		"version": "1.4",
		"body": []any{
			map[string]any{"type": "TextBlock", "text": "Bunting", "weight": "Bolder", "size": "Medium"},
			map[string]any{"type": "TextBlock", "text": s.sentence(markdown), "wrap": true},
			map[string]any{"type": "FactSet", "facts": facts},
		},
	}
	if s.Link != "" {
		card["actions"] = []any{map[string]any{"type": "Action.OpenUrl", "title": "Open in Bunting", "url": s.Link}}
	}
	return map[string]any{
		"type": "message",
		"attachments": []any{map[string]any{
			"contentType": "application/vnd.microsoft.card.adaptive",
			"contentUrl":  nil,
			"content":     card,
		}},
	}
}

// Datadog: an event of the events API v1
// (https://docs.datadoghq.com/api/latest/events/#post-an-event).

type datadogEvent struct {
	Title          string   `json:"title"`
	Text           string   `json:"text"`
	Tags           []string `json:"tags"`
	AlertType      string   `json:"alert_type"`
	AggregationKey string   `json:"aggregation_key,omitempty"`
	SourceTypeName string   `json:"source_type_name,omitempty"`
	DateHappened   int64    `json:"date_happened"`
}

func datadogBody(s summary, ev store.Event, params map[string]string) (datadogEvent, error) {
	d := datadogEvent{
		Title:          truncate("Bunting: "+s.sentence(plain), 100),
		AlertType:      "info",
		SourceTypeName: params["sourceTypeName"],
		DateHappened:   ev.CreatedAt.Unix(),
		Tags:           []string{"event:" + ev.Type},
	}
	if s.Project != "" {
		d.Tags = append(d.Tags, "project:"+s.Project)
	}
	if s.Env != "" {
		d.Tags = append(d.Tags, "environment:"+s.Env)
	}
	if s.Flag != "" {
		d.Tags = append(d.Tags, "flag:"+s.Flag)
		d.AggregationKey = truncate("flag:"+s.Flag, 100)
	}
	var tags []struct{ Type, Value string }
	if json.Unmarshal(ev.Tags, &tags) == nil {
		for _, t := range tags {
			d.Tags = append(d.Tags, t.Type+":"+t.Value)
		}
	}
	if t := params["bodyTemplate"]; len(t) > 1 {
		tmpl, err := parseTemplate(t)
		if err != nil {
			return d, buildFailed("the text template does not parse: %s", err.Error())
		}
		var event map[string]any
		raw, _ := json.Marshal(ev)
		_ = json.Unmarshal(raw, &event)
		text, err := tmpl.Render(map[string]any{"event": event})
		if err != nil {
			return d, buildFailed("the text template does not render: %s", err.Error())
		}
		d.Text = truncate(text, 4000)
		return d, nil
	}
	d.Text = "%%% \n" + truncate(s.sentence(markdown), 3980) + "\n %%%"
	return d, nil
}

// bodyReader is the request body.
func (r request) bodyReader() *bytes.Reader { return bytes.NewReader(r.body) }
