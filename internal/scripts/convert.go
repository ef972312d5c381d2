package scripts

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/bunting-flags/bunting/engine"
	"github.com/dop251/goja"
)

// Built-in context field names, as the Node SDK spells them.
const (
	fieldUserID        = "userId"
	fieldSessionID     = "sessionId"
	fieldRemoteAddress = "remoteAddress"
	fieldEnvironment   = "environment"
	fieldAppName       = "appName"
	fieldCurrentTime   = "currentTime"
	fieldProperties    = "properties"
)

// contextFields lists the built-in string fields with their place in an
// engine.Context.
var contextFields = []struct {
	name string
	ref  func(*engine.Context) *string
}{
	{fieldUserID, func(c *engine.Context) *string { return &c.UserID }},
	{fieldSessionID, func(c *engine.Context) *string { return &c.SessionID }},
	{fieldRemoteAddress, func(c *engine.Context) *string { return &c.RemoteAddress }},
	{fieldEnvironment, func(c *engine.Context) *string { return &c.Environment }},
	{fieldAppName, func(c *engine.Context) *string { return &c.AppName }},
	{fieldCurrentTime, func(c *engine.Context) *string { return &c.CurrentTime }},
}

// contextToJS builds the object a Node script sees: the built-in fields that
// are set, and a properties object that is always present.
func contextToJS(vm *goja.Runtime, ctx *engine.Context) *goja.Object {
	obj := vm.NewObject()
	if ctx == nil {
		ctx = &engine.Context{}
	}
	for _, f := range contextFields {
		if v := *f.ref(ctx); v != "" {
			_ = obj.Set(f.name, v)
		}
	}
	props := vm.NewObject()
	for k, v := range ctx.Properties {
		defineString(vm, props, k, v)
	}
	_ = obj.Set(fieldProperties, props)
	return obj
}

// parametersToJS builds the strategy parameters object.
func parametersToJS(vm *goja.Runtime, params map[string]string) *goja.Object {
	obj := vm.NewObject()
	for k, v := range params {
		defineString(vm, obj, k, v)
	}
	return obj
}

// defineString adds an own, ordinary property, so that client-chosen names
// such as "__proto__" stay data instead of reaching a setter.
func defineString(vm *goja.Runtime, obj *goja.Object, key, value string) {
	_ = obj.DefineDataProperty(key, vm.ToValue(value), goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_TRUE)
}

// contextFromJS reads an enricher's result back. It must be an object; the
// built-in fields and property values must be strings, numbers, booleans or
// dates (coerced to strings) or absent. Other top-level fields with such
// values become properties, since the Node SDK looks a constraint's field up
// on the context first and in properties second.
func contextFromJS(v goja.Value) (engine.Context, error) {
	var ctx engine.Context
	obj, err := plainObject(v)
	if err != nil {
		return ctx, fmt.Errorf("enricher must return a context object, got %s", err)
	}
	builtin := make(map[string]bool, len(contextFields)+1)
	builtin[fieldProperties] = true
	for _, f := range contextFields {
		builtin[f.name] = true
		s, ok, err := scalarString(obj.Get(f.name))
		if err != nil {
			return ctx, fmt.Errorf("context.%s: %w", f.name, err)
		}
		if ok {
			*f.ref(&ctx) = s
		}
	}
	if err := readProperties(obj.Get(fieldProperties), &ctx); err != nil {
		return ctx, err
	}
	for _, key := range obj.Keys() {
		if builtin[key] {
			continue
		}
		s, ok, err := scalarString(obj.Get(key))
		if err != nil || !ok {
			continue // not usable as a context value; ignored as Node would never match it
		}
		if _, taken := ctx.Properties[key]; !taken {
			setProperty(&ctx, key, s)
		}
	}
	return ctx, nil
}

// readProperties copies an enricher's properties object into ctx.
func readProperties(v goja.Value, ctx *engine.Context) error {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return nil
	}
	props, err := plainObject(v)
	if err != nil {
		return fmt.Errorf("context.properties must be an object, got %s", err)
	}
	for _, key := range props.Keys() {
		s, ok, err := scalarString(props.Get(key))
		if err != nil {
			return fmt.Errorf("context.properties.%s: %w", key, err)
		}
		if ok {
			setProperty(ctx, key, s)
		}
	}
	return nil
}

func setProperty(ctx *engine.Context, key, value string) {
	if ctx.Properties == nil {
		ctx.Properties = make(map[string]string)
	}
	ctx.Properties[key] = value
}

// plainObject accepts an object that is not an array or a function; the
// error text describes what the value was instead.
func plainObject(v goja.Value) (*goja.Object, error) {
	if v == nil || goja.IsUndefined(v) {
		return nil, fmt.Errorf("undefined")
	}
	if goja.IsNull(v) {
		return nil, fmt.Errorf("null")
	}
	obj, ok := v.(*goja.Object)
	if !ok {
		return nil, fmt.Errorf("%s %s", primitiveKind(v), v.String())
	}
	if _, isFn := goja.AssertFunction(v); isFn {
		return nil, fmt.Errorf("a function")
	}
	if obj.ClassName() == "Array" {
		return nil, fmt.Errorf("an array")
	}
	return obj, nil
}

// scalarString converts a context value to the string the engine matches
// on. ok is false for undefined and null (absent).
func scalarString(v goja.Value) (s string, ok bool, err error) {
	if v == nil || goja.IsUndefined(v) || goja.IsNull(v) {
		return "", false, nil
	}
	switch x := v.Export().(type) {
	case string:
		return x, true, nil
	case bool:
		return strconv.FormatBool(x), true, nil
	case int64:
		return strconv.FormatInt(x, 10), true, nil
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return "", false, fmt.Errorf("not a finite number")
		}
		return v.String(), true, nil
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano), true, nil
	}
	return "", false, fmt.Errorf("must be a string, number, boolean or Date, got %s", v.String())
}

// primitiveKind names a primitive's JavaScript type for error messages.
func primitiveKind(v goja.Value) string {
	switch v.Export().(type) {
	case string:
		return "string"
	case bool:
		return "boolean"
	case int64, float64:
		return "number"
	}
	return "value"
}
