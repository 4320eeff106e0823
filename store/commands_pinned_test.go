package store_test

import (
	"errors"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/store"
)

// TestPrepareCommandRefusesInvalidUTF8Ids: a command_id or client_id that
// is not valid UTF-8 is refused with ErrInvalidCommand, as run_id and type
// are: JSON text would store U+FFFD in its place, so a duplicate could not
// be told by its id.
func TestPrepareCommandRefusesInvalidUTF8Ids(t *testing.T) {
	t.Parallel()
	for _, c := range []*durable.CommandRecord{
		{CommandID: "c\xff1", RunID: "r1", Type: "pause"},
		{RunID: "r1", Type: "pause", ClientID: "cl\xfe"},
	} {
		if _, err := store.PrepareCommand(c, time.Now()); !errors.Is(err, store.ErrInvalidCommand) {
			t.Errorf("PrepareCommand(command_id %q, client_id %q) = %v, want ErrInvalidCommand", c.CommandID, c.ClientID, err)
		}
	}
}

// TestPrepareCommandNilPayloadIsEmptyObject: a command without a payload
// gets {} (in place and in the encoded payload), as the Python stores
// write it, never JSON null.
func TestPrepareCommandNilPayloadIsEmptyObject(t *testing.T) {
	t.Parallel()
	c := &durable.CommandRecord{RunID: "r1", Type: "pause"}
	b, err := store.PrepareCommand(c, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != "{}" || c.Payload == nil || len(c.Payload) != 0 {
		t.Errorf("payload encoded %s, Payload %#v; want {} and an empty map", b, c.Payload)
	}
}

// TestPrepareCommandPayloadNotJSONIsInvalidCommand: a payload JSON cannot
// hold is an error about the command itself, so it wraps
// ErrInvalidCommand (the gateway answers it as a bad request).
func TestPrepareCommandPayloadNotJSONIsInvalidCommand(t *testing.T) {
	t.Parallel()
	c := &durable.CommandRecord{RunID: "r1", Type: "pause", Payload: map[string]any{"ch": make(chan int)}}
	if _, err := store.PrepareCommand(c, time.Now()); !errors.Is(err, store.ErrInvalidCommand) {
		t.Errorf("PrepareCommand with a channel in the payload = %v, want ErrInvalidCommand", err)
	}
}
