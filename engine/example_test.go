package engine_test

import (
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/bunting-flags/bunting/engine"
)

// A proxy compiles each payload it receives once, publishes the snapshot
// through an atomic pointer and evaluates every request against the
// current one.
func ExampleSnapshot_EvaluateAll() {
	payload := `{"version":2,"features":[
	  {"name":"new-checkout","enabled":true,"strategies":[{"name":"flexibleRollout",
	    "parameters":{"rollout":"100","stickiness":"default","groupId":"new-checkout"},
	    "constraints":[{"contextName":"country","operator":"IN","values":["NO","SE"]}]}],
	   "variants":[{"name":"blue","weight":1000,"payload":{"type":"string","value":"#00f"}}]},
	  {"name":"dark-mode","enabled":false,"strategies":[]}]}`
	var cf engine.ClientFeatures
	if err := json.Unmarshal([]byte(payload), &cf); err != nil {
		panic(err)
	}
	var current atomic.Pointer[engine.Snapshot]
	current.Store(engine.Compile(&cf, engine.Options{}))

	ctx := &engine.Context{UserID: "42", Properties: map[string]string{"country": "NO"}}
	results := make([]engine.Result, 0, current.Load().Len())
	for _, r := range current.Load().EvaluateAll(ctx, results) {
		fmt.Printf("%s enabled=%v variant=%s (id %d)\n", r.Name, r.Enabled, r.Variant.Name, r.Variant.ID)
	}
	// Output:
	// new-checkout enabled=true variant=blue (id 2)
	// dark-mode enabled=false variant=disabled (id 0)
}

// Constraints can be matched on their own, for example to filter signals.
func ExampleCompileConstraints() {
	m := engine.CompileConstraints([]engine.Constraint{
		{ContextName: "source", Operator: "IN", Values: []string{"pagerduty"}},
		{ContextName: "severity", Operator: "NUM_GTE", Value: "3"},
	}, engine.Options{})
	fmt.Println(m.Match(&engine.Context{Properties: map[string]string{"source": "pagerduty", "severity": "4"}}))
	fmt.Println(m.Match(&engine.Context{Properties: map[string]string{"source": "pagerduty", "severity": "1"}}))
	// Output:
	// true
	// false
}
