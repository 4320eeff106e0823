package runtime_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// toolCallsKey is the Python key of a TOOL_CALLS effect of one call
// named read_file with the given arguments (absent when args is
// argsAbsent), the spec's third test vector (runtime-model §2.9) with
// its arguments replaced.
func toolCallsKey(args any) string {
	call := map[string]any{"name": " read_file ", "call_id": "abc"}
	if args != argsAbsent {
		call["arguments"] = args
	}
	return runtime.PythonIdempotencyKey("run-1", "tools", &durable.Effect{Type: durable.EffectToolCalls, Payload: map[string]any{
		"tool_calls":    []any{call},
		"allowed_tools": []any{"write_file", "read_file", "read_file"},
	}})
}

var argsAbsent = new(int)

// A call's arguments given as an object hash as the same arguments given
// as JSON text do (runtime-model §2.9: a string is parsed, an object is
// kept): the spec's vector, whose arguments are text, has the key of its
// object form. Keys that dropped or replaced object arguments would give
// every object form the key of {} and make calls that differ only in
// their arguments reuse each other's results.
func TestToolCallsKeyKeepsObjectArguments(t *testing.T) {
	t.Parallel()
	const want = "3cc3b4a58e2edd4b1da34b5c57319b43" // arguments {"file_path": "a.txt"}
	if got := toolCallsKey(map[string]any{"file_path": "a.txt"}); got != want {
		t.Errorf("object arguments: key %s, want %s (the key of the same arguments as text)", got, want)
	}
	if toolCallsKey(map[string]any{"file_path": "b.txt"}) == want {
		t.Errorf("calls with other object arguments share a key")
	}
}

// Arguments that are no JSON object, or text that does not parse as one,
// or no arguments at all, hash as {} (runtime-model §2.9: "non-object or
// invalid → {}", "any other non-object → {}"), so a call repeated without
// arguments, with null or with an unparsable text gets one key.
func TestToolCallsKeyArgumentsNotAnObjectAreEmpty(t *testing.T) {
	t.Parallel()
	want := toolCallsKey(map[string]any{})
	for name, args := range map[string]any{
		"absent":       argsAbsent,
		"null":         nil,
		"number":       int64(3),
		"list":         []any{"a.txt"},
		"invalid text": `{"file_path": `,
		"list text":    `["a.txt"]`,
		"empty text":   "",
	} {
		if got := toolCallsKey(args); got != want {
			t.Errorf("arguments %s: key %s, want %s (the key of {})", name, got, want)
		}
	}
}
