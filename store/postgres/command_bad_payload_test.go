package postgres_test

import (
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
)

// TestCommandListAfterReadsBadPayloadAsEmpty: a command whose
// payload_json is not a JSON object ("null", a list, torn text: a hand
// edit or another tool writing into the shared database) reads with the
// payload {}, as Python's SqliteCommandStore.list_after reads it
// (json.loads in a try, non-dict -> {}) and as the SQLite store does
// (store/sqlite TestCommandWithBadPayloadReadsAsEmpty). Failing the whole
// listing instead wedged every consumer whose cursor was before that row:
// no command after it was ever read again (a lost pause or cancel for
// every runner sharing the inbox).
func TestCommandListAfterReadsBadPayloadAsEmpty(t *testing.T) {
	testURL(t)
	t.Parallel()
	ctx := t.Context()
	schema := testSchema(t)
	s := openSchema(t, schema)
	for _, id := range []string{"a", "b", "c", "d"} {
		if _, err := s.CommandAppend(ctx, &durable.CommandRecord{CommandID: id, RunID: "r", Type: "pause",
			Payload: map[string]any{"k": id}}); err != nil {
			t.Fatal(err)
		}
	}
	conn := plainConn(t)
	for id, bad := range map[string]string{"a": "null", "b": "[1, 2]", "c": "{torn"} {
		if _, err := conn.Exec(ctx, `UPDATE `+pgx.Identifier{schema, "commands"}.Sanitize()+
			` SET payload_json = $1 WHERE command_id = $2`, bad, id); err != nil {
			t.Fatal(err)
		}
	}
	got, next, err := s.CommandListAfter(ctx, 0, 10)
	if err != nil {
		t.Fatalf("listing commands with hand-edited payloads: %v; want them read with payload {}", err)
	}
	if len(got) != 4 || next != 4 {
		t.Fatalf("listed %d commands up to %d, want 4 up to 4", len(got), next)
	}
	for _, c := range got {
		want := 0
		if c.CommandID == "d" {
			want = 1
		}
		if c.Payload == nil || len(c.Payload) != want {
			t.Errorf("command %s payload = %v", c.CommandID, c.Payload)
		}
	}
}
