package store

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// ErrInvalidCommand is wrapped by CommandAppend errors about the command
// itself (missing run_id or type, a payload that is not JSON).
var ErrInvalidCommand = errors.New("invalid command")

// PrepareCommand checks a command before a backend appends it and fills
// its defaults in place: ids and type are trimmed, run_id and type are
// required, an empty
// command_id becomes a random uuid4 hex, a command without ts (neither
// TS nor a SetTSText text) gets the current time, a nil payload {}; a ts
// text is kept as given. It returns the payload encoded as the Python stores write it.
func PrepareCommand(c *durable.CommandRecord, now time.Time) ([]byte, error) {
	// Trimmed, as every Python command store trims them: " c1 " and "c1"
	// are one command.
	c.CommandID, c.RunID = pyval.Strip(c.CommandID), pyval.Strip(c.RunID)
	c.Type, c.ClientID = pyval.Strip(c.Type), pyval.Strip(c.ClientID)
	if c.RunID == "" || c.Type == "" {
		return nil, fmt.Errorf("run_id and type are required: %w", ErrInvalidCommand)
	}
	for _, f := range []struct{ what, v string }{{"command_id", c.CommandID}, {"run_id", c.RunID}, {"type", c.Type}, {"client_id", c.ClientID}, {"ts", c.TSText()}} {
		if !utf8.ValidString(f.v) {
			// JSON text cannot hold it: the store would read back U+FFFD,
			// and a duplicate could not be told by its id.
			return nil, fmt.Errorf("%s %q is not valid UTF-8: %w", f.what, f.v, ErrInvalidCommand)
		}
	}
	if c.Payload == nil {
		c.Payload = map[string]any{}
	}
	payload, err := pyjson.Marshal(c.Payload, pyjson.Line)
	if err != nil {
		return nil, fmt.Errorf("payload: %w: %w", err, ErrInvalidCommand)
	}
	if c.CommandID == "" {
		c.CommandID = NewCommandID()
	}
	switch {
	case !c.HasTS():
		c.TS = durable.NewTime(now)
	case c.TSText() == "":
		c.TS = durable.NewTime(c.TS.Time) // as every store keeps it: UTC, to the microsecond
	}
	return payload, nil
}

// NewCommandID returns a random uuid4 in hex without dashes, the form the
// Python command stores generate.
func NewCommandID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return hex.EncodeToString(b[:])
}
