package integrations

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/bunting-flags/bunting/internal/store"
)

// summary is what a message says about an event: who did what to which
// flag, where, with a link to the flag in the web UI when the server's
// address (BUNTING_URL) is known.
type summary struct {
	Actor, Action       string
	After               string // what follows the flag's name
	Flag, Project, Env  string
	Subject             string // what a non-flag event is about (data.name)
	Link                string
	Type                string
	hasFlag, hasSubject bool
}

// actions phrase the flag events (what follows a "|" comes after the
// flag's name); other types are described generically.
var actions = map[string]string{
	"feature-created":                      "created the flag",
	"feature-updated":                      "updated the flag",
	"feature-metadata-updated":             "updated the details of the flag",
	"feature-archived":                     "archived the flag",
	"feature-revived":                      "revived the flag",
	"feature-deleted":                      "deleted the flag",
	"feature-environment-enabled":          "enabled the flag",
	"feature-environment-disabled":         "disabled the flag",
	"feature-strategy-add":                 "added a strategy to the flag",
	"feature-strategy-update":              "updated a strategy of the flag",
	"feature-strategy-remove":              "removed a strategy from the flag",
	"strategy-order-changed":               "reordered the strategies of the flag",
	"feature-stale-on":                     "marked the flag|as stale",
	"feature-stale-off":                    "marked the flag|as no longer stale",
	"feature-potentially-stale-on":         "found the flag|potentially stale",
	"feature-variants-updated":             "updated the variants of the flag",
	"feature-environment-variants-updated": "updated the variants of the flag",
	"feature-project-change":               "moved the flag",
	"feature-tagged":                       "tagged the flag",
	"feature-untagged":                     "untagged the flag",
	"feature-type-updated":                 "changed the type of the flag",
	"feature-dependency-added":             "added a dependency to the flag",
	"feature-dependency-removed":           "removed a dependency of the flag",
	"feature-dependencies-removed":         "removed the dependencies of the flag",
}

// summarize describes ev; baseURL is the server's address ("" for none).
func summarize(ev store.Event, baseURL string) summary {
	s := summary{Actor: ev.CreatedBy, Type: ev.Type}
	if s.Actor == "" {
		s.Actor = "someone"
	}
	if ev.FeatureName != nil && *ev.FeatureName != "" {
		s.Flag, s.hasFlag = *ev.FeatureName, true
	}
	if ev.Project != nil {
		s.Project = *ev.Project
	}
	if ev.Environment != nil {
		s.Env = *ev.Environment
	}
	if a, ok := actions[ev.Type]; ok && s.hasFlag {
		s.Action, s.After, _ = strings.Cut(a, "|")
	} else {
		s.Action = strings.ReplaceAll(ev.Type, "-", " ")
		if !s.hasFlag {
			s.Subject, s.hasSubject = dataName(ev)
		}
	}
	if baseURL != "" && s.hasFlag && s.Project != "" {
		s.Link = strings.TrimRight(baseURL, "/") + "/projects/" + url.PathEscape(s.Project) + "/flags/" + url.PathEscape(s.Flag)
	}
	return s
}

// dataName is the name (or id) in an event's data or previous data.
func dataName(ev store.Event) (string, bool) {
	for _, raw := range []json.RawMessage{ev.Data, ev.PreData} {
		var m map[string]any
		if json.Unmarshal(raw, &m) != nil {
			continue
		}
		for _, k := range []string{"name", "username", "id"} {
			switch v := m[k].(type) {
			case string:
				if v != "" {
					return v, true
				}
			case float64:
				b, _ := json.Marshal(v)
				return string(b), true
			}
		}
	}
	return "", false
}

// style marks up a sentence for one kind of text.
type style struct {
	bold func(string) string
	link func(text, href string) string
}

var (
	// markdown is CommonMark, which Teams' TextBlock and Datadog render.
	markdown = style{
		bold: func(s string) string { return "**" + escapeMarkdown(s) + "**" },
		link: func(t, h string) string { return "[" + t + "](" + h + ")" },
	}
	// slackMrkdwn is Slack's own markup.
	slackMrkdwn = style{
		bold: func(s string) string { return "*" + escapeSlack(s) + "*" },
		link: func(t, h string) string { return "<" + h + "|" + t + ">" },
	}
	// plain is for fallback texts and titles.
	plain = style{bold: func(s string) string { return s }, link: func(t, _ string) string { return t }}
)

// sentence is the one-line description of the event in a style, e.g.
// "**admin** enabled the flag [**checkout**](…) in **production** (project **web**)".
func (s summary) sentence(st style) string {
	var b strings.Builder
	b.WriteString(st.bold(s.Actor))
	b.WriteByte(' ')
	b.WriteString(s.Action)
	switch {
	case s.hasFlag:
		b.WriteByte(' ')
		name := st.bold(s.Flag)
		if s.Link != "" {
			name = st.link(name, s.Link)
		}
		b.WriteString(name)
		if s.After != "" {
			b.WriteByte(' ')
			b.WriteString(s.After)
		}
	case s.hasSubject:
		b.WriteString(": ")
		b.WriteString(st.bold(s.Subject))
	}
	if s.Env != "" {
		b.WriteString(" in ")
		b.WriteString(st.bold(s.Env))
	}
	if s.Project != "" {
		b.WriteString(" (project ")
		b.WriteString(st.bold(s.Project))
		b.WriteByte(')')
	}
	return b.String()
}

var markdownEscaper = strings.NewReplacer(`\`, `\\`, `*`, `\*`, `_`, `\_`, "`", "\\`", `[`, `\[`, `]`, `\]`, `<`, `\<`)

func escapeMarkdown(s string) string { return markdownEscaper.Replace(s) }

// escapeSlack escapes what Slack's markup requires (&, <, >).
var slackEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

func escapeSlack(s string) string { return slackEscaper.Replace(s) }

// truncate shortens s to at most n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	cut := n - len("…")
	for cut > 0 && !utf8Start(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
