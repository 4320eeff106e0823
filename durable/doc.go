// Package durable defines the persisted types of the runtime — RunState,
// WaitState, Effect, StepRecord, CommandRecord, Snapshot — and their JSON
// wire form, which is byte-compatible with the Python AbstractRuntime:
// snake_case keys in Python's order, optional fields present as null,
// enum values as lower-case strings, timestamps as Python isoformat()
// strings (parsed leniently, compared as times).
//
// The package has no I/O. Stores, the kernel and the gateway all import it.
package durable
