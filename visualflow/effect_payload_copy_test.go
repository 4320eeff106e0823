package visualflow

import (
	"testing"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// TestEffectPayloadSharesNoInputMaps: the payload builders put input
// values (memory_note tags/sources, ask_user choices, media extra and
// source items, memory_rehydrate span_ids, model_residency options,
// llm_call response_schema, ...) into the payload as they are, so the
// payload shared maps and slices with the resolved inputs, which are the
// run's vars (node outputs are pulled without a copy). The runtime hands
// an already-normalised payload to handlers and into the in-flight plan
// uncopied: a handler changing its payload changed the run's vars, and a
// change to those vars changed the payload recorded for the effect.
func TestEffectPayloadSharesNoInputMaps(t *testing.T) {
	cases := []struct {
		typ  string
		pins string
	}{
		{"memory_note", `{"content":"n","tags":{"a":"b"},"sources":{"s":[1]}}`},
		{"ask_user", `{"prompt":"p","choices":["a","b"]}`},
		{"generate_image", `{"prompt":"p","extra":{"k":[1]}}`},
		{"edit_image", `{"image_artifact":{"$artifact":"a","x":[1]}}`},
		{"memory_rehydrate", `{"span_ids":["s1"]}`},
		{"model_residency", `{"options":{"a":[1]}}`},
		{"llm_call", `{"prompt":"p","resp_schema":{"type":"object","properties":{}}}`},
	}
	for _, c := range cases {
		in, err := pyjson.DecodeObject([]byte(c.pins))
		if err != nil {
			t.Fatal(err)
		}
		p, err := fzBuild(c.typ, in, map[string]any{}, map[string]any{})
		if err != nil {
			t.Fatalf("%s: %v", c.typ, err)
		}
		fzMutate(p)
		if got := jsonText(t, in); got != jsonText(t, fzMustDecode(t, c.pins)) {
			t.Errorf("%s: mutating the payload changed the node's inputs:\n%s", c.typ, got)
		}
	}
}

func fzMustDecode(t *testing.T, s string) any {
	t.Helper()
	v, err := pyjson.Decode([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return v
}
