// Package history exports a run's durable history as a versioned,
// client-agnostic document (spec §6.2, Python export_run_history_bundle)
// and records which workflow definition a run executed
// (PersistWorkflowSnapshot).
//
// A bundle is read-only over the stores: it gathers the run, its
// descendants (breadth first over parent links), each run's ledger window
// with absolute 1-based cursors, a flat timeline, bounded summaries of the
// artifacts each run owns and, on request, the turns of the run's session.
// The only write is the offloading of oversized input values into the
// artifact store, as in Python; unlike Python, its failure fails the
// export.
//
// The bundle is returned as a generic JSON tree in the form
// internal/pyjson.Decode produces (objects as map[string]any, arrays as
// []any, numbers as json.Number), so callers can encode it with any
// encoder and compare it with a bundle read back from JSON.
package history
