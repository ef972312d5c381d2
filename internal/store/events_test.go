package store_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// searchCorpus is the text the free-text search tests look into: case,
// LIKE and FTS5 metacharacters, word boundaries and quotes.
var searchCorpus = []string{
	"Hello World", "hello_world", "helloXworld", "100% off", "50%", "a_b", "axb", `back\slash`, `back\\double`,
	"flag-4242", "flag-42420", "FLAG-4242X", "xflag-4242", `say "hi" AND bye`, "name:value", "star*", "caret^up",
	"café au lait", "MiXeD CaSe TeXt", "ab", "a", "zz top", "trailing space ", "tab\there", "new\nline", "-dash-",
}

// seedSearchEvents writes events whose type, creator, data, previous data
// and flag vary over the corpus, three projects and four flags.
func seedSearchEvents(t *testing.T, st *store.Store) {
	t.Helper()
	types := []string{"feature-created", "feature-updated", "feature-environment-enabled"}
	creators := []string{"alice", "Bob.Smith@example.com", "unleash_system_user", "50%_user"}
	err := st.Tx(context.Background(), func(tx *store.Tx) error {
		for i := range 3 * len(searchCorpus) {
			ev := store.NewEvent{
				Type:        types[i%len(types)],
				Actor:       store.Actor{Name: creators[i%len(creators)]},
				Project:     fmt.Sprintf("project-%d", i%3),
				FeatureName: fmt.Sprintf("flag-%d", i%4),
				Environment: "production",
				Data:        map[string]any{"text": searchCorpus[i%len(searchCorpus)], "n": i},
			}
			if i%2 == 0 {
				ev.PreData = map[string]any{"text": searchCorpus[(i+7)%len(searchCorpus)]}
			}
			if i%5 == 0 {
				ev.FeatureName = ""
			}
			if err := tx.Event(ev); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// wantEvents answers f from all events the way Unleash does: exact type,
// project and flag, and query a case-insensitive substring of the type,
// creator, data, previous data or tags on its own; newest first.
func wantEvents(all []store.Event, f store.EventFilter) []int64 {
	q := strings.ToLower(f.Query)
	ids := []int64{}
	for _, ev := range all {
		if f.Type != "" && ev.Type != f.Type || f.Project != "" && deref(ev.Project) != f.Project || f.Feature != "" && deref(ev.FeatureName) != f.Feature {
			continue
		}
		if q != "" && !slices.ContainsFunc([]string{ev.Type, ev.CreatedBy, string(ev.Data), string(ev.PreData), string(ev.Tags)},
			func(s string) bool { return strings.Contains(strings.ToLower(s), q) }) {
			continue
		}
		ids = append(ids, ev.ID)
	}
	ids = ids[min(f.Offset, len(ids)):]
	return ids[:min(f.Limit, len(ids))]
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// TestEventSearchMatchesExactly compares search with a plain scan for every
// filter combination, with the text index alone, with the scan of the
// newest events alone, and with both.
func TestEventSearchMatchesExactly(t *testing.T) {
	servertest.RunDB(t, func(t *testing.T, db servertest.Database) {
		st := servertest.OpenStore(t, db)
		seedSearchEvents(t, st)
		all, _, err := st.Q(context.Background()).Events(store.EventFilter{Limit: 1 << 30})
		if err != nil {
			t.Fatal(err)
		}
		queries := []string{
			// substrings within and across words, in any case
			"hello", "HELLO WORLD", "o w", "lo_wo", "llo", "FLAG-4242", "flag-4242x", "lag-4", "4242", "42420", "café", "café au",
			"mixed case", "xed ca", "-dash-", "dash", "'", "tab\th", "new\nl",
			// LIKE metacharacters taken literally
			"%", "_", `\`, "100%", "0% o", "a_b", "%_", `k\s`, `\\`, `k\\d`, "50%_",
			// FTS5 syntax taken literally
			`"hi"`, `"hi" and`, "and bye", "name:", "star*", "^up", "(", `"`,
			// one and two characters
			"a", "Z", "ab", "42", " ",
			// the other fields: type, creator, tags, previous data
			"environment-en", "BOB.SMITH", "@example", "system_u", "[]", `"text":"zz`,
			// across the boundary of two fields, and nowhere
			"created alice", "enabled bob", "off 50%", "nothing-like-this", "zzz",
		}
		var filters []store.EventFilter
		for _, typ := range []string{"", "feature-updated"} {
			for _, project := range []string{"", "project-1"} {
				for _, feature := range []string{"", "flag-2"} {
					filters = append(filters, store.EventFilter{Type: typ, Project: project, Feature: feature})
				}
			}
		}
		pages := [][2]int{{100, 0}, {1, 0}, {3, 2}, {2, 7}}
		check := func(t *testing.T) {
			for _, q := range append([]string{""}, queries...) {
				for _, f := range filters {
					for _, page := range pages {
						f.Query, f.Limit, f.Offset = q, page[0], page[1]
						got, total, err := st.Q(context.Background()).Events(f)
						if err != nil {
							t.Fatalf("%+v: %v", f, err)
						}
						ids := []int64{}
						for _, ev := range got {
							ids = append(ids, ev.ID)
						}
						if want := wantEvents(all, f); !slices.Equal(ids, want) {
							t.Errorf("%+v: got %v, want %v", f, ids, want)
						}
						if want := len(wantEvents(all, store.EventFilter{Type: f.Type, Project: f.Project, Feature: f.Feature, Limit: 1 << 30})); total != want {
							t.Errorf("%+v: total %d, want %d", f, total, want)
						}
					}
				}
			}
		}
		for _, scanned := range []int64{0, 10, 1 << 30} {
			t.Run(fmt.Sprintf("newest-%d", scanned), func(t *testing.T) {
				defer store.SetRecentEventsScanned(scanned)()
				check(t)
			})
		}
	})
}
