package durable

import (
	"fmt"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// CommandRecord is one control-plane command in the durable inbox.
type CommandRecord struct {
	CommandID string // idempotency key; a random hex id when empty
	RunID     string
	Type      string // e.g. pause, resume, cancel, emit_event
	Payload   map[string]any
	TS        Time
	ClientID  string
	Seq       int64 // store-assigned, 1-based, strictly increasing
}

// JSONValue returns the wire object (Python key order).
func (c *CommandRecord) JSONValue() pyjson.Ordered {
	payload := c.Payload
	if payload == nil {
		payload = map[string]any{}
	}
	return pyjson.Ordered{
		{Key: "command_id", Value: c.CommandID},
		{Key: "run_id", Value: c.RunID},
		{Key: "type", Value: c.Type},
		{Key: "payload", Value: payload},
		{Key: "ts", Value: c.TS.jsonValue()},
		{Key: "client_id", Value: nullString(c.ClientID)},
		{Key: "seq", Value: c.Seq},
	}
}

// CommandFromJSON builds a CommandRecord from a decoded JSON object.
func CommandFromJSON(m map[string]any) (*CommandRecord, error) {
	var c CommandRecord
	var err error
	if c.CommandID, err = getString(m, "command_id"); err != nil {
		return nil, err
	}
	if c.RunID, err = getString(m, "run_id"); err != nil {
		return nil, err
	}
	if c.Type, err = getString(m, "type"); err != nil {
		return nil, err
	}
	if c.Payload, err = getObject(m, "payload"); err != nil {
		return nil, err
	}
	if c.Payload == nil {
		c.Payload = map[string]any{}
	}
	if c.TS, err = getTime(m, "ts"); err != nil {
		return nil, err
	}
	if c.ClientID, err = getString(m, "client_id"); err != nil {
		return nil, err
	}
	if c.Seq, err = getInt(m, "seq", 0); err != nil {
		return nil, err
	}
	if c.CommandID == "" {
		return nil, fmt.Errorf("field \"command_id\" is missing")
	}
	return &c, nil
}

// CommandAppendResult reports what CommandAppend did. A duplicate carries
// the original seq.
type CommandAppendResult struct {
	Accepted  bool
	Duplicate bool
	Seq       int64
}
