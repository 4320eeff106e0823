package visualflow

import (
	"fmt"
	"strings"
)

// CompileError reports a VisualFlow document that cannot be compiled. It
// names where the problem is: the bundle (when compiled from one), the
// flow, and, when known, the node and pin.
type CompileError struct {
	Bundle string // bundle ref "<id>@<version>", "" outside a bundle
	Flow   string // flow id
	Node   string // node id, "" when the error is about the whole flow
	Pin    string // pin id, "" when not about one pin
	Msg    string
	Err    error // underlying cause, if any
}

// Error implements error: "bundle b: flow f: node n: pin p: msg".
func (e *CompileError) Error() string {
	var parts []string
	if e.Bundle != "" {
		parts = append(parts, "bundle "+e.Bundle)
	}
	if e.Flow != "" {
		parts = append(parts, "flow "+e.Flow)
	}
	if e.Node != "" {
		parts = append(parts, "node "+e.Node)
	}
	if e.Pin != "" {
		parts = append(parts, "pin "+e.Pin)
	}
	msg := e.Msg
	if e.Err != nil {
		if msg == "" {
			msg = e.Err.Error()
		} else {
			msg += ": " + e.Err.Error()
		}
	}
	parts = append(parts, msg)
	return strings.Join(parts, ": ")
}

// Unwrap returns the underlying cause.
func (e *CompileError) Unwrap() error { return e.Err }

// errorf builds a CompileError for a flow.
func (c *compiler) errorf(node, pin, format string, args ...any) *CompileError {
	return &CompileError{Bundle: c.opts.Bundle, Flow: c.flowID, Node: node, Pin: pin, Msg: fmt.Sprintf(format, args...)}
}

// nodeError is a failure of a node's own logic at run time (a Python
// exception in the reference): function nodes turn it into a completion
// with success=false, other handlers fail the run.
type nodeError struct{ msg string }

func (e *nodeError) Error() string { return e.msg }

func nodeErrorf(format string, args ...any) error {
	return &nodeError{msg: fmt.Sprintf(format, args...)}
}
