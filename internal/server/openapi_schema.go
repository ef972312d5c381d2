package server

import (
	"encoding/json"
	"reflect"
	"strings"
	"time"
	"unicode"
)

// schemaReflector turns Go types into OpenAPI 3.0 schemas the way
// encoding/json writes them: named structs become components
// (#/components/schemas/Name), fields follow their json tags, a field
// without omitempty/omitzero is required, pointers are nullable.
type schemaReflector struct {
	schemas jsonObj
	names   map[reflect.Type]string
	// requests: structs first met in a request body list no required
	// properties (a missing property gets its zero value or an error that
	// names it).
	requests bool
}

func newSchemaReflector() *schemaReflector {
	return &schemaReflector{schemas: jsonObj{}, names: map[reflect.Type]string{}}
}

var (
	timeType       = reflect.TypeFor[time.Time]()
	rawMessageType = reflect.TypeFor[json.RawMessage]()
)

// schema returns the schema of t, registering the components it needs.
func (sr *schemaReflector) schema(t reflect.Type) jsonObj {
	switch {
	case t == timeType:
		return jsonObj{"type": "string", "format": "date-time"}
	case t == rawMessageType:
		return anyJSON()
	}
	switch t.Kind() {
	case reflect.Pointer:
		s := sr.schema(t.Elem())
		if _, isRef := s["$ref"]; isRef {
			return jsonObj{"allOf": []any{s}, "nullable": true}
		}
		s["nullable"] = true
		return s
	case reflect.String:
		return jsonObj{"type": "string"}
	case reflect.Bool:
		return jsonObj{"type": "boolean"}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		s := jsonObj{"type": "integer"}
		if t.Kind() == reflect.Int64 || t.Kind() == reflect.Uint64 {
			s["format"] = "int64"
		}
		return s
	case reflect.Float32, reflect.Float64:
		return jsonObj{"type": "number"}
	case reflect.Slice, reflect.Array:
		if t.Elem().Kind() == reflect.Uint8 {
			return jsonObj{"type": "string", "format": "byte"}
		}
		// encoding/json writes a nil slice or map as null.
		return jsonObj{"type": "array", "items": sr.schema(t.Elem()), "nullable": t.Kind() == reflect.Slice}
	case reflect.Map:
		return jsonObj{"type": "object", "additionalProperties": sr.schema(t.Elem()), "nullable": true}
	case reflect.Struct:
		if customJSON(t) {
			return anyJSON() // its own encoding; its fields say nothing
		}
		if t.Name() == "" {
			return sr.object(t)
		}
		if name, ok := sr.names[t]; ok {
			return jsonObj{"$ref": "#/components/schemas/" + name}
		}
		return sr.named(t, sr.componentName(t))
	default: // interfaces
		return anyJSON()
	}
}

// customJSON reports a struct without exported fields that encodes or
// decodes itself (e.g. a time accepted as a string or a number).
func customJSON(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	if !p.Implements(reflect.TypeFor[json.Marshaler]()) && !p.Implements(reflect.TypeFor[json.Unmarshaler]()) {
		return false
	}
	for i := range t.NumField() {
		if t.Field(i).IsExported() {
			return false
		}
	}
	return true
}

// anyJSON is the schema of any JSON value, null included.
func anyJSON() jsonObj { return jsonObj{"description": "Any JSON value", "nullable": true} }

// named registers struct type t as the component name and returns a
// reference to it.
func (sr *schemaReflector) named(t reflect.Type, name string) jsonObj {
	sr.names[t] = name
	sr.schemas[name] = jsonObj{} // placeholder while recursing
	sr.schemas[name] = sr.object(t)
	return jsonObj{"$ref": "#/components/schemas/" + name}
}

// componentName is the type's name with an upper-case first letter,
// prefixed by its package's when another package's type took it.
func (sr *schemaReflector) componentName(t reflect.Type) string {
	name := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '.' {
			return r
		}
		return '_'
	}, t.Name())
	name = strings.ToUpper(name[:1]) + name[1:]
	if _, taken := sr.schemas[name]; taken {
		pkg := t.PkgPath()[strings.LastIndexByte(t.PkgPath(), '/')+1:]
		name = strings.ToUpper(pkg[:1]) + pkg[1:] + name
	}
	return name
}

// object is a struct's schema: its JSON properties, embedded structs'
// flattened in.
func (sr *schemaReflector) object(t reflect.Type) jsonObj {
	props, required := jsonObj{}, []string{}
	sr.fields(t, props, &required)
	s := jsonObj{"type": "object", "properties": props}
	if len(required) > 0 {
		s["required"] = required
	}
	return s
}

// fields adds t's JSON properties that props lacks: its own fields first,
// then its embedded structs' (a shallower field hides a deeper one, as in
// encoding/json).
func (sr *schemaReflector) fields(t reflect.Type, props jsonObj, required *[]string) {
	var embedded []reflect.Type
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, hidden := props[name]; hidden {
			continue
		}
		s := sr.schema(ft)
		if strings.Contains(opts, "string") {
			s = jsonObj{"type": "string"}
		}
		props[name] = s
		if !sr.requests && !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero") {
			*required = append(*required, name)
		}
	}
	for _, et := range embedded {
		sr.fields(et, props, required)
	}
}
