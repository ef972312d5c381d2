package engine

import "testing"

func TestConstraintKeyDistinguishes(t *testing.T) {
	a := Constraint{ContextName: "a", Operator: "IN", Values: []string{"x,y"}}
	b := Constraint{ContextName: "a", Operator: "IN", Values: []string{"x", "y"}}
	c := Constraint{ContextName: "a", Operator: "IN", Values: []string{"x,y"}, Inverted: true}
	d := Constraint{ContextName: "a", Operator: "IN", Values: []string{"x,y"}, CaseInsensitive: true}
	e := Constraint{ContextName: "a", Operator: "IN", Value: "x,y"}
	keys := map[string]bool{}
	for _, x := range []Constraint{a, b, c, d, e} {
		keys[constraintKey(x)] = true
	}
	if len(keys) != 5 {
		t.Fatalf("distinct constraints share keys: %d keys for 5", len(keys))
	}
	table := newConstraintTable(newFieldTable())
	plain, inverted := table.compile(a), table.compile(c)
	if plain>>1 != inverted>>1 || plain&1 != 0 || inverted&1 != 1 {
		t.Fatalf("an inverted twin must share the test and set the inversion bit: refs %b and %b", plain, inverted)
	}
	unknown := table.compile(Constraint{ContextName: "a", Operator: "NOPE", Inverted: true})
	if unknown&1 != 0 {
		t.Fatal("an unknown operator must not be inverted: it never holds")
	}
	if constraintKey(a) != constraintKey(Constraint{ContextName: "a", Operator: "IN", Values: []string{"x,y"}}) {
		t.Fatal("identical constraints have different keys")
	}
}
