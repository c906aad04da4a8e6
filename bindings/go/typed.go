package hermestools

// Typed tools: the arguments' JSON Schema is generated from a Go struct (its
// json tags, plus optional `desc` and `enum` tags), and the handler gets the
// decoded struct. The library still validates and repairs the arguments
// against that schema before the handler runs.

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
)

// TypedHandler handles a call whose arguments decoded into T.
type TypedHandler[T any] func(call Call, args T) (string, error)

// RegisterTyped registers a tool whose parameters are the fields of struct T:
//
//	type ReadArgs struct {
//		Path  string `json:"path" desc:"File to read"`
//		Limit int    `json:"limit,omitempty"`
//		Mode  string `json:"mode,omitempty" enum:"text,binary"`
//	}
//	hermestools.RegisterTyped(rt, "read", "files", "Read a file", false,
//		func(c hermestools.Call, a ReadArgs) (string, error) { ... })
//
// A field is required unless it is a pointer or its json tag has omitempty;
// `json:"-"` fields are left out. Supported field types: strings, booleans,
// integers, floats, slices/arrays, maps with string keys, nested structs and
// pointers to them. Other types are an error at registration.
func RegisterTyped[T any](r *Runtime, name, toolset, description string, parallelSafe bool, handler TypedHandler[T]) error {
	if handler == nil {
		return &Error{Status: StatusInvalidArgument, Message: "RegisterTyped: nil handler"}
	}
	var zero T
	schema, err := SchemaFor(reflect.TypeOf(zero))
	if err != nil {
		return &Error{Status: StatusInvalidArgument, Message: "RegisterTyped " + name + ": " + err.Error()}
	}
	b, _ := json.Marshal(schema)
	return r.RegisterTool(ToolSpec(name, toolset, description, string(b), parallelSafe), func(c Call) (string, error) {
		var args T
		if err := json.Unmarshal([]byte(c.Args), &args); err != nil {
			return "", fmt.Errorf("arguments do not fit %T: %v", args, err)
		}
		return handler(c, args)
	}, nil)
}

// SchemaFor returns the JSON Schema (as a map) of a Go type, as RegisterTyped uses it.
func SchemaFor(t reflect.Type) (map[string]any, error) {
	if t == nil {
		return nil, fmt.Errorf("no type")
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct {
		return nil, fmt.Errorf("the arguments type must be a struct, got %s", t)
	}
	return schemaOf(t, map[reflect.Type]bool{})
}

func schemaOf(t reflect.Type, seen map[reflect.Type]bool) (map[string]any, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return map[string]any{"type": "string"}, nil
	case reflect.Bool:
		return map[string]any{"type": "boolean"}, nil
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return map[string]any{"type": "integer"}, nil
	case reflect.Float32, reflect.Float64:
		return map[string]any{"type": "number"}, nil
	case reflect.Slice, reflect.Array:
		items, err := schemaOf(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "array", "items": items}, nil
	case reflect.Map:
		if t.Key().Kind() != reflect.String {
			return nil, fmt.Errorf("map keys must be strings, got %s", t.Key())
		}
		values, err := schemaOf(t.Elem(), seen)
		if err != nil {
			return nil, err
		}
		return map[string]any{"type": "object", "additionalProperties": values}, nil
	case reflect.Interface:
		return map[string]any{}, nil
	case reflect.Struct:
		if seen[t] {
			return nil, fmt.Errorf("recursive type %s", t)
		}
		seen[t] = true
		defer delete(seen, t)
		props := map[string]any{}
		required := []string{}
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			parts := strings.Split(tag, ",")
			name := parts[0]
			if name == "" {
				name = f.Name
			}
			omit := false
			for _, p := range parts[1:] {
				if p == "omitempty" {
					omit = true
				}
			}
			s, err := schemaOf(f.Type, seen)
			if err != nil {
				return nil, fmt.Errorf("%s: %v", name, err)
			}
			if d := f.Tag.Get("desc"); d != "" {
				s["description"] = d
			}
			if e := f.Tag.Get("enum"); e != "" {
				vals := []any{}
				for _, v := range strings.Split(e, ",") {
					vals = append(vals, v)
				}
				s["enum"] = vals
			}
			props[name] = s
			if !omit && f.Type.Kind() != reflect.Pointer {
				required = append(required, name)
			}
		}
		out := map[string]any{"type": "object", "properties": props}
		if len(required) > 0 {
			out["required"] = required
		}
		return out, nil
	}
	return nil, fmt.Errorf("unsupported type %s", t)
}
