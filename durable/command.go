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
	// TS is the command's time: set by a Go caller, parsed from the text
	// SetTSText keeps, or stamped by the store at append when neither is
	// given. It is zero for a ts text that is not a time ParseTime reads.
	TS       Time
	ClientID string
	Seq      int64 // store-assigned, 1-based, strictly increasing
	// tsText is ts as a client or another writer gave it (SetTSText):
	// Python's stores keep the text as given (gateway-api §4.1), so it is
	// what the wire carries, whether or not it is a time.
	tsText string
}

// SetTSText sets the command's ts from text as a client gave it: kept as
// given for the wire (TSValue), and parsed into TS when it is a time
// ParseTime reads (else TS is zero). "" clears both: the store then
// stamps the time of the append.
func (c *CommandRecord) SetTSText(text string) {
	c.tsText, c.TS = text, Time{}
	if t, err := ParseTime(text); err == nil {
		c.TS = t
	}
}

// TSText returns the ts text SetTSText kept, or "" when the command's ts
// is TS alone.
func (c *CommandRecord) TSText() string { return c.tsText }

// TSString returns ts as text: the kept text, else TS in Python's form,
// else "" (no ts).
func (c *CommandRecord) TSString() string {
	if c.tsText != "" {
		return c.tsText
	}
	return c.TS.String()
}

// TSValue returns ts as the wire has it: TSString, or null for no ts.
func (c *CommandRecord) TSValue() any { return nullString(c.TSString()) }

// HasTS reports whether the command carries a ts, as text or as a time.
func (c *CommandRecord) HasTS() bool { return c.tsText != "" || !c.TS.IsZero() }

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
		{Key: "ts", Value: c.TSValue()},
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
	switch ts := m["ts"].(type) {
	case string:
		c.SetTSText(ts) // kept as given, a time or not
	default:
		if c.TS, err = getTime(m, "ts"); err != nil {
			return nil, err
		}
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
