package hermestools

import (
	"encoding/json"
)

// jsonQuote returns s as a JSON string literal.
func jsonQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// ToolSpec builds a tool spec JSON: {"name","toolset","parallel_safe","schema":{"description","parameters"}}.
// parameters is a JSON Schema object ("" = no parameters).
func ToolSpec(name, toolset, description, parameters string, parallelSafe bool) string {
	if parameters == "" {
		parameters = `{"type":"object","properties":{}}`
	}
	spec := map[string]any{
		"name":          name,
		"toolset":       toolset,
		"parallel_safe": parallelSafe,
		"schema": map[string]any{
			"description": description,
			"parameters":  json.RawMessage(parameters),
		},
	}
	b, err := json.Marshal(spec)
	if err != nil {
		// invalid parameters JSON: let the library report it
		return `{"name":` + jsonQuote(name) + `,"schema":` + parameters + `}`
	}
	return string(b)
}
