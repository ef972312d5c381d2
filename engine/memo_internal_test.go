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
	if constraintKey(a) != constraintKey(Constraint{ContextName: "a", Operator: "IN", Values: []string{"x,y"}}) {
		t.Fatal("identical constraints have different keys")
	}
}
