package webui

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestEditorRowsShowWhatIsStored renders the editors' rows for stored
// items and new ones: a variant of weight 0 keeps 0 (a new one gets 1000),
// a one-value constraint shows its value in the Value box, a list
// constraint its values in the Values box.
func TestEditorRowsShowWhatIsStored(t *testing.T) {
	h, err := New(Options{})
	if err != nil {
		t.Fatal(err)
	}
	tpl := h.pages["flag"]
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
	if got := render("variant-row", decode(`{"name":"off","weight":0,"weightType":"fix","stickiness":"default"}`)); !strings.Contains(got, `name="weight" type="number" min="0" max="1000" value="0"`) {
		t.Errorf("a stored weight of 0 renders as %s", got)
	}
	if got := render("variant-row", map[string]any{}); !strings.Contains(got, `value="1000"`) || !strings.Contains(got, `name="weightType" value="variable"`) {
		t.Errorf("a new variant renders as %s", got)
	}
	one := render("constraint-row", map[string]any{"C": decode(`{"contextName":"age","operator":"NUM_GT","value":"17","values":[]}`), "Ops": operators})
	if !strings.Contains(one, `<option selected>NUM_GT</option>`) || !strings.Contains(one, `name="value" placeholder="one value" value="17"`) {
		t.Errorf("a one-value constraint renders as %s", one)
	}
	list := render("constraint-row", map[string]any{"C": decode(`{"contextName":"userId","operator":"IN","values":["a","b"]}`), "Ops": operators})
	if !strings.Contains(list, `value="a, b"`) {
		t.Errorf("a list constraint renders as %s", list)
	}
}
