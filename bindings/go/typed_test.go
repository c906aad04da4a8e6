package hermestools

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type readArgs struct {
	Path  string            `json:"path" desc:"File to read"`
	Limit int               `json:"limit,omitempty"`
	Mode  string            `json:"mode,omitempty" enum:"text,binary"`
	Tags  []string          `json:"tags,omitempty"`
	Opts  *struct{ X bool } `json:"opts"`
	Skip  string            `json:"-"`
}

func TestTypedToolSchemaAndDecoding(t *testing.T) {
	s, err := SchemaFor(reflect.TypeOf(readArgs{}))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(s)
	for _, want := range []string{`"required":["path"]`, `"description":"File to read"`, `"enum":["text","binary"]`, `"limit":{"type":"integer"}`, `"tags":{"items":{"type":"string"},"type":"array"}`} {
		if !strings.Contains(string(b), want) {
			t.Fatalf("%s lacks %s", b, want)
		}
	}
	if strings.Contains(string(b), "Skip") {
		t.Fatalf("json:\"-\" field in %s", b)
	}

	rt := newRT(t, "")
	err = RegisterTyped(rt, "read", "go", "Read a file", false, func(c Call, a readArgs) (string, error) {
		return a.Path + "|" + a.Mode + "|" + strings.Join(a.Tags, ","), nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The library repairs "5" to 5 and validates against the generated schema.
	if out := mustDispatch(t, rt, "read", `{"path":"/x","mode":"text","tags":["a","b"],"limit":"5"}`, ""); out != "/x|text|a,b" {
		t.Fatal(out)
	}
	contains(t, mustDispatch(t, rt, "read", `{"mode":"text"}`, ""), "path")
	contains(t, mustDispatch(t, rt, "read", `{"path":"/x","mode":"zip"}`, ""), "error")

	if err := RegisterTyped(rt, "bad", "go", "bad", false, func(Call, int) (string, error) { return "", nil }); err == nil {
		t.Fatal("a non-struct type was accepted")
	}
	type withChan struct {
		C chan int `json:"c"`
	}
	if err := RegisterTyped(rt, "bad2", "go", "bad", false, func(Call, withChan) (string, error) { return "", nil }); err == nil || !strings.Contains(err.Error(), "unsupported") {
		t.Fatalf("err = %v", err)
	}
}
