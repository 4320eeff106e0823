// Package visualflow compiles VisualFlow documents — the JSON graphs of
// the AbstractFlow visual editor, distributed in .flow bundles — into
// runtime workflows, and implements their execution semantics (spec
// shared/spec/visualflow.md).
//
// Compile turns one flow into a *runtime.Workflow: it normalises the
// document, refuses bad input at load (unknown node types, edges to
// missing nodes or pins, pin type mismatches, duplicate wires, cycles of
// pure nodes, stale multi-entry metadata) with a *CompileError naming
// bundle, flow, node and pin, lowers multi-entry targets into join_exec
// and path_mux nodes, classifies nodes (exec, pure, literal), picks the
// entry, prunes unreachable exec nodes and computes successors.
// CompileBundle does the same for every flow of a bundle after
// namespacing, and adds on_event listener workflows and (optionally)
// ReAct placeholder workflows for agent nodes.
//
// At run time each exec node is one runtime node. Handlers derive
// everything from run vars on every step — the bus (_last_output), node
// outputs (_temp.node_outputs), effect outcomes (_temp.effects, mapped to
// pins on read), the control stack (_temp._control) — so a run resumes
// identically after a restart on any store. Pure nodes are evaluated
// lazily and uncached when a consumer pulls one of their pins; their
// implementations live in package builtin, with Python value semantics
// from package pyval. Effects (LLM, tools, media, memory, waits, events,
// subflows) are emitted as runtime effects with the payloads the
// reference runtime builds; the code node runs user code in a Starlark
// sandbox (package code).
//
// docs/visualflow.md records the porting decisions and the differences
// from the Python reference.
package visualflow
