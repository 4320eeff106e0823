package visualflow

import "testing"

// inheritedChildMessages runs a subflow node with inherit_context true, the
// parent's context holding parentMsgs and the child's context pin (a
// pinDefault, JSON) holding childCtx, and returns the child's
// context.messages as sent in the start_subworkflow payload.
func inheritedChildMessages(t *testing.T, parentMsgs []any, childCtx string) []any {
	t.Helper()
	vars := map[string]any{"context": map[string]any{"messages": parentMsgs}}
	p, _ := subflowCall(t, subflowParentFlow(`, {"id": "context", "type": "object"}, {"id": "inherit_context", "type": "boolean"}`,
		`"inherit_context": true, "context": `+childCtx, ``), vars)
	cv, _ := p["vars"].(map[string]any)
	ctx, _ := cv["context"].(map[string]any)
	msgs, _ := ctx["messages"].([]any)
	return msgs
}

// §5.5 inherit_context merge: the child's context.messages become child
// system messages, parent system, parent history, remaining child
// messages. The reference only merges the child's *message objects*:
// compiler.py (wrapped_effect_handler, "Visual Subflow UX" block) reads
//
//	existing_msgs = [dict(m) for m in existing if isinstance(m, dict)]
//
// so a non-object entry of the child's context.messages (a stray string,
// a null from an unset wire) is dropped from the merged list. Ours keeps
// them (split() files every non-object entry under "child rest"), so the
// child run receives entries that are not messages at all and an LLM node
// in the child using context sends them on.
func TestSubflowInheritContextDropsNonObjectChildMessages(t *testing.T) {
	msgs := inheritedChildMessages(t,
		[]any{map[string]any{"role": "user", "content": "parent"}},
		`{"messages": ["stray text", null, {"role": "user", "content": "child"}]}`)
	if len(msgs) != 2 {
		t.Fatalf("child context.messages = %s, want [parent, child] only (non-object entries dropped as in the reference)", jsonText(t, msgs))
	}
	for _, m := range msgs {
		if _, ok := m.(map[string]any); !ok {
			t.Fatalf("child context.messages = %s: holds a non-object entry %v", jsonText(t, msgs), m)
		}
	}
}

// §5.5: the merge is "de-duplicated by metadata.message_id when present
// (messages without ids are never de-duplicated)". The reference's id is
// compiler.py's _msg_id:
//
//	mid = meta.get("message_id")
//	if isinstance(mid, str) and mid.strip(): return mid.strip()
//	return ""
//
// so ids are compared stripped (" m1 " is the parent's "m1", a duplicate
// the child must not receive twice), and a blank id (" ") is no id: two
// such messages are both kept. Ours compares the raw text and treats any
// non-empty text as an id: it keeps the " m1 " duplicate and drops the
// second message with a blank id.
func TestSubflowInheritContextMessageIDsAreStripped(t *testing.T) {
	msgs := inheritedChildMessages(t,
		[]any{map[string]any{"role": "user", "content": "parent", "metadata": map[string]any{"message_id": "m1"}}},
		`{"messages": [
		  {"role": "user", "content": "dup", "metadata": {"message_id": " m1 "}},
		  {"role": "user", "content": "blank-a", "metadata": {"message_id": " "}},
		  {"role": "user", "content": "blank-b", "metadata": {"message_id": " "}}]}`)
	var got []any
	for _, m := range msgs {
		o, _ := m.(map[string]any)
		got = append(got, o["content"])
	}
	want := []any{"parent", "blank-a", "blank-b"}
	if jsonText(t, got) != jsonText(t, want) {
		t.Fatalf("child context.messages contents = %v, want %v (ids compared stripped; blank ids are no ids)", got, want)
	}
}
