package webui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestEditorRowsShowWhatIsStored renders the editors' rows for stored
// items and new ones: a variant of weight 0 keeps 0, a share reads as a
// percentage (a new one is balanced by the page), stickiness is offered
// once per field,
// a one-value constraint shows its value in the Value box, a list
// constraint its values in the Values box.
func TestEditorRowsShowWhatIsStored(t *testing.T) {
	h, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	tpl := h.pages["flag"]()
	render := func(name string, arg any) string {
		var b bytes.Buffer
		if err := tpl.ExecuteTemplate(&b, name, arg); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return b.String()
	}
	decode := func(s string) map[string]any {
		var m map[string]any
		if err := json.Unmarshal([]byte(s), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	fields := []map[string]any{{"name": "userId", "stickiness": true}, {"name": "sessionId", "stickiness": true}, {"name": "tenant", "stickiness": true}, {"name": "plan"}}
	if got := render("variant-row", map[string]any{"V": decode(`{"name":"off","weight":0,"weightType":"fix","stickiness":"tenant"}`), "Fields": fields}); !strings.Contains(got, `name="weight" data-type="number" value="0"`) ||
		!strings.Contains(got, `data-share min="0" max="100" step="0.1" value="0" >`) || !strings.Contains(got, `<option value="fix" selected>fixed</option>`) || !strings.Contains(got, `<option selected>tenant</option>`) {
		t.Errorf("a stored fixed weight of 0 renders as %s", got)
	}
	if got := render("variant-row", map[string]any{"V": decode(`{"name":"a","weight":333,"weightType":"variable"}`), "Fields": fields}); !strings.Contains(got, `value="33.3" readonly`) {
		t.Errorf("a balanced weight of 333 renders as %s", got)
	}
	if got := render("variant-row", map[string]any{"V": nil, "Fields": fields}); !strings.Contains(got, `<option value="variable" selected>balanced automatically</option>`) || strings.Contains(got, "1000") {
		t.Errorf("a new variant renders as %s", got)
	}
	if got := strings.Join(stickinessChoices(fields), " "); got != "default userId sessionId tenant random" {
		t.Errorf("the stickiness choices are %s", got)
	}
	one := render("constraint-row", map[string]any{"C": decode(`{"contextName":"age","operator":"NUM_GT","value":"17","values":[]}`), "Ops": operators})
	if !strings.Contains(one, `<option value="NUM_GT" selected>is greater than (NUM_GT)</option>`) || !strings.Contains(one, `name="value" placeholder="one value" value="17"`) {
		t.Errorf("a one-value constraint renders as %s", one)
	}
	list := render("constraint-row", map[string]any{"C": decode(`{"contextName":"userId","operator":"IN","values":["a","b"]}`), "Ops": operators})
	if !strings.Contains(list, `value="a, b"`) {
		t.Errorf("a list constraint renders as %s", list)
	}
}

// TestStrategyFormShowsStoredParameters renders the strategy editor for a
// stored gradual rollout: its rollout and group id fill their fields. (The
// integrations screen once defined a template function of the same name
// as the editor's param, which replaced it and made every flag page with a
// strategy editor fail to draw; New now refuses a name defined twice.)
func TestStrategyFormShowsStoredParameters(t *testing.T) {
	h, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	var st map[string]any
	if err := json.Unmarshal([]byte(`{"name":"flexibleRollout","parameters":{"rollout":"35","groupId":"g1","stickiness":"userId"},"constraints":[],"variants":[]}`), &st); err != nil {
		t.Fatal(err)
	}
	d := map[string]any{"Name": "f", "StrategyTypes": []map[string]any{{"name": "flexibleRollout", "displayName": "Gradual rollout"}},
		"ContextFields": []map[string]any{}, "Operators": operators}
	var b bytes.Buffer
	if err := h.pages["flag"]().ExecuteTemplate(&b, "strategy-form", map[string]any{"D": d, "St": st, "URL": "/x", "Method": "PUT", "Submit": "Save"}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`name="parameters.rollout" type="number" min="0" max="100" value="35"`, `name="parameters.groupId" value="g1"`, `<option selected>userId</option>`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("the editor lacks %s:\n%s", want, b.String())
		}
	}
}
