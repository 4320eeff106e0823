package storetest_test

import (
	"context"
	"encoding/hex"
	"fmt"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestSpecBlankCommandIDIsUUID4HexOnEveryBackend pins spec §4.5 on every
// backend: an append with an empty command_id stores the command under a
// random uuid4 hex (32 lower-case hex digits, version 4, RFC 4122
// variant), the id handed back to the caller.
func TestSpecBlankCommandIDIsUUID4HexOnEveryBackend(t *testing.T) {
	ctx := context.Background()
	for _, b := range diffBackends(t) {
		c := &durable.CommandRecord{RunID: "run-1", Type: "pause", Payload: map[string]any{}}
		res, err := b.st.CommandAppend(ctx, c)
		if err != nil || !res.Accepted {
			t.Fatalf("%s: CommandAppend = %+v, %v", b.name, res, err)
		}
		cmds, _, err := b.st.CommandListAfter(ctx, 0, 0)
		if err != nil || len(cmds) != 1 {
			t.Fatalf("%s: CommandListAfter = %v, %v", b.name, cmds, err)
		}
		id := cmds[0].CommandID
		raw, err := hex.DecodeString(id)
		if err != nil || len(id) != 32 || hex.EncodeToString(raw) != id {
			t.Errorf("%s: stored command id %q is not 32 lower-case hex digits", b.name, id)
			continue
		}
		if raw[6]>>4 != 4 || raw[8]>>6 != 2 {
			t.Errorf("%s: stored command id %q is not a uuid4", b.name, id)
		}
		if c.CommandID != id {
			t.Errorf("%s: caller got id %q, store holds %q", b.name, c.CommandID, id)
		}
	}
}

// TestSpecCommandListAfterDefaultLimitIs1000OnEveryBackend pins spec
// §4.5's list_after(after, limit=1000) on every backend: given no limit
// (Go: 0, or a negative one as docs/compatibility.md says), a page holds
// exactly 1000 commands and next_cursor is the seq of the last one.
func TestSpecCommandListAfterDefaultLimitIs1000OnEveryBackend(t *testing.T) {
	if testing.Short() {
		t.Skip("appends 1001 commands per backend")
	}
	ctx := context.Background()
	for _, b := range diffBackends(t) {
		for i := range 1001 {
			c := &durable.CommandRecord{CommandID: fmt.Sprintf("c%04d", i), RunID: "run-1", Type: "pause", Payload: map[string]any{}}
			if _, err := b.st.CommandAppend(ctx, c); err != nil {
				t.Fatalf("%s: CommandAppend #%d: %v", b.name, i, err)
			}
		}
		for _, limit := range []int{0, -1} {
			got, next, err := b.st.CommandListAfter(ctx, 0, limit)
			if err != nil || len(got) != 1000 || next != 1000 || got[999].Seq != 1000 {
				t.Errorf("%s: CommandListAfter(0, %d) = %d commands, next %d, %v; want 1000, next 1000", b.name, limit, len(got), next, err)
			}
		}
		got, next, err := b.st.CommandListAfter(ctx, 1000, 0)
		if err != nil || len(got) != 1 || next != 1001 {
			t.Errorf("%s: CommandListAfter(1000, 0) = %d commands, next %d, %v; want the last one, next 1001", b.name, len(got), next, err)
		}
	}
}
