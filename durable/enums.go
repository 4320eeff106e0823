package durable

// RunStatus is the lifecycle state of a run.
type RunStatus string

// Run statuses. Completed, failed and cancelled are terminal.
const (
	RunRunning   RunStatus = "running"
	RunWaiting   RunStatus = "waiting"
	RunCompleted RunStatus = "completed"
	RunFailed    RunStatus = "failed"
	RunCancelled RunStatus = "cancelled"
)

// RunStatuses lists every run status.
func RunStatuses() []RunStatus {
	return []RunStatus{RunRunning, RunWaiting, RunCompleted, RunFailed, RunCancelled}
}

// Terminal reports whether a run in this status never progresses again.
func (s RunStatus) Terminal() bool {
	return s == RunCompleted || s == RunFailed || s == RunCancelled
}

// Valid reports whether s is a known run status.
func (s RunStatus) Valid() bool {
	switch s {
	case RunRunning, RunWaiting, RunCompleted, RunFailed, RunCancelled:
		return true
	}
	return false
}

// WaitReason says what a waiting run waits for.
type WaitReason string

// Wait reasons.
const (
	WaitEvent       WaitReason = "event"
	WaitUntil       WaitReason = "until"
	WaitUser        WaitReason = "user"
	WaitJob         WaitReason = "job"
	WaitSubworkflow WaitReason = "subworkflow"
)

// WaitReasons lists every wait reason.
func WaitReasons() []WaitReason {
	return []WaitReason{WaitEvent, WaitUntil, WaitUser, WaitJob, WaitSubworkflow}
}

// Valid reports whether r is a known wait reason.
func (r WaitReason) Valid() bool {
	switch r {
	case WaitEvent, WaitUntil, WaitUser, WaitJob, WaitSubworkflow:
		return true
	}
	return false
}

// EffectType names a side effect a node may request.
type EffectType string

// Effect types (the 18 of the Python runtime). Each constant's doc says
// what its handler reads from Effect.Payload and what it produces; the
// built-in handlers are in package runtime, the others are wired by the
// host (runtime.Config.Handlers). Conventions:
//   - A completed, non-null result is written at Effect.ResultKey. A
//     failed effect writes nothing; after the retries of the runtime's
//     EffectPolicy it fails the run.
//   - A waiting effect parks the run in a WaitState. Its resume (Resume,
//     or the kernel itself for events, deadlines and child runs) writes
//     the resume payload at the same ResultKey and continues at the
//     resume target: payload "resume_to_node" when truthy, else the
//     plan's NextNode. With neither, the resume completes the run with
//     {"success": true, "result": <what it wrote>}.
//   - Flags and optional values are read with Python truthiness ("false"
//     is true: send JSON booleans); a number given where text is expected
//     is read as its text.
//   - A tool envelope is {"mode": "executed", "results": [{"call_id",
//     "name", "success", "output", "error"}]} with one entry; the memory
//     effects add "meta" to it. Payload "call_id" and "tool_name" replace
//     its per-effect defaults.
const (
	// EffectWaitEvent waits for an event (reason event). Its wait key is
	// payload "wait_key" when truthy, else evt:<scope>:<scope id>:<name>
	// (runtime.EventKey) from "name" (or "event_name"; a non-blank
	// string, required), "scope" (session by default, workflow, run,
	// global) and, for the session scope, "session_id" (default: the
	// run's session, else its id); the workflow and run scopes use the
	// waiting run's own ids. Optional: "prompt" (non-blank string),
	// "choices" (list; its trimmed non-blank strings), "allow_free_text"
	// or "allowFreeText" (default true), "details" (object), and a
	// deadline, "until" (ISO time string) or "timeout_s" (non-negative
	// seconds from now; "until" wins). Resume payload: the envelope an
	// EffectEmitEvent or runtime.EmitEvent sends; past the deadline the
	// kernel resumes with {"timed_out": true}.
	EffectWaitEvent EffectType = "wait_event"
	// EffectWaitUntil waits until payload "until" (required ISO time
	// string, read by ParseTime and compared as an instant). A time
	// already reached completes at once with {"until": <the text given>,
	// "ready": true}. Otherwise the run waits (reason until, no wait key)
	// until a tick at or after that time (the scheduler's) releases it:
	// the run continues at the resume target and nothing is written at the
	// result key; with no resume target its node runs again.
	EffectWaitUntil EffectType = "wait_until"
	// EffectAskUser always waits for a person (reason user). Payload:
	// "prompt" (required, truthy; kept as its text), "choices" (a list,
	// kept as given), "allow_free_text" (default true), "wait_key"
	// (default user:<run id>:<current node>). Resume payload: any object,
	// written whole (by convention {"text": …} or {"response": …}).
	EffectAskUser EffectType = "ask_user"
	// EffectAnswerUser shows a message and does not wait. Payload:
	// "message" (else "text" when truthy, else "content"; required
	// non-null, read as its text) and "level" ("warning" or "warn",
	// "error", anything else is "message"; trimmed, any case). Result:
	// {"message": <text>, "level": "message"|"warning"|"error"}.
	EffectAnswerUser EffectType = "answer_user"
	// EffectEmitEvent resumes the runs waiting on an event. Payload:
	// "name" (or "event_name"; non-blank string, required), "scope" and
	// "session_id" as for EffectWaitEvent (the workflow and run scopes
	// reach only the emitter's own workflow or run), "payload" (object; a
	// truthy non-object is sent as {"value": x}, a falsy one as {}),
	// "event_id" (optional), "max_steps" (steps each resumed listener is
	// ticked right away; default 0: listeners are driven after the
	// emitter's tick). Every non-paused run waiting on the key, or on the
	// scope's wildcard (name "*"), is resumed with {"event_id", "name",
	// "scope", "session_id", "payload", "emitted_at", "emitter":
	// {"run_id", "workflow_id", "node_id"}}. Result: {"wait_key", "name",
	// "scope", "delivered" (a count), "delivered_to" (run ids), "resumed"
	// ([{"run_id", "status"}], plus "error" when status is "error")}, and
	// "available_listeners_in_session" (event names the session's runs
	// wait on) when nothing was delivered.
	EffectEmitEvent EffectType = "emit_event"
	// EffectLLMCall asks a model. No built-in handler: the host's defines
	// the payload and result (AbstractCore's: "prompt" or "messages",
	// "system_prompt", "tools", "params", …; result {"content",
	// "tool_calls", "usage", "model", "finish_reason", …}). The kernel
	// reads only the result's "usage" (input_tokens, else prompt_tokens,
	// else total_tokens) into vars._limits.estimated_tokens_used;
	// EffectMemoryCompact's child sends {"prompt"} (plus "params":
	// {"max_tokens"} from _limits.max_output_tokens) and reads "content".
	EffectLLMCall EffectType = "llm_call"
	// EffectModelResidency loads, unloads or lists models. No built-in
	// handler: payload ("operation", "provider", "model", …) and result
	// are the host handler's.
	EffectModelResidency EffectType = "model_residency"
	// EffectToolCalls runs tool calls. No built-in handler. Payload:
	// "tool_calls" ([{"name", "arguments", "call_id"?,
	// "runtime_call_id"?}]), "allowed_tools", "wait_key",
	// "resume_to_node". Before the handler sees it the kernel gives each
	// call a runtime_call_id (rtcall_<idempotency key>_<n>, n from 1; one
	// given is kept) and a call_id (its "call_id" or "id", trimmed, else
	// the runtime_call_id), trims names, keeps the trimmed non-blank
	// strings of allowed_tools sorted and deduplicated, and records
	// missing or duplicate call ids in vars._flow_warnings. Result
	// expected: {"mode": "executed", "results": [{"call_id",
	// "runtime_call_id", "name", "success", "output", "error"}]}, in call
	// order. A handler may wait instead; the resume of that wait merges
	// back the entries its details fixed (blocked_by_index,
	// pre_results_by_index, original_call_count) and turns the answer
	// {"approved": …} to an approval_required wait into failed results.
	EffectToolCalls EffectType = "tool_calls"
	// EffectMemoryQuery recalls memory spans of the requesting run (needs
	// runtime.Config.Artifacts). Payload: "scope" (run by default,
	// session, global, or all three), "span_id"/"span_ids" (artifact ids,
	// or 1-based indices newest first, not with scope all) or filters:
	// "query" (case-insensitive substring; sets "deep" by default),
	// "since"/"until" (ISO), "tags" (values a string or a list) with
	// "tags_mode" (all by default, any/or), "authors"/"usernames"/"users",
	// "locations"/"location", "limit_spans" (5), "deep",
	// "deep_limit_spans" (50), "deep_limit_messages_per_span" (400),
	// "connected", "neighbor_hops" (1), "connect_by" (["topic",
	// "person"]); also "max_messages" (-1: no cap), "recall_level"
	// (urgent, standard, deep: defaults and caps), "return" or
	// "return_mode" (rendered by default, meta, both). Result: a tool
	// envelope (recall_memory, id memory) whose output is the rendered text
	// ("" for meta) and whose meta is {"matches", "span_ids", "effort"?,
	// "warnings"?} (null for rendered).
	EffectMemoryQuery EffectType = "memory_query"
	// EffectMemoryTag merges payload "tags" (a non-empty string→string
	// object; "kind" is dropped) into the tags of span "span_id" (artifact
	// id, or 1-based index in stored order, not with scope all), or
	// replaces them with "merge": false, and stamps tagged_at and
	// tagged_by. "scope" (run by default, session, global, all) and
	// "target_run_id" choose the owner runs. Needs no artifact store.
	// Result: a tool envelope (remember, id memory), output "Tagged
	// span_id=… scope=… runs=[…] tags=…", meta {"applied": [{"run_id",
	// "artifact_id", "tags"}]}; an unknown span fails the effect.
	EffectMemoryTag EffectType = "memory_tag"
	// EffectMemoryCompact summarises the older part of context.messages of
	// the requesting run or "target_run_id" (needs runtime.Config.Artifacts
	// and an EffectLLMCall handler: a child run of
	// runtime.CompactionLLMWorkflowID writes the summary). Payload:
	// "preserve_recent" (recent non-system messages kept; 6),
	// "compression_mode" (light, standard by default, heavy), "focus". The
	// older messages are archived as a conversation_span artifact and
	// span, and replaced by one system summary message. Result: a tool
	// envelope (compact_memory, id memory), output "Compacted <n> messages
	// into span_id=<id>.", meta {"llm_run_id", "span_id",
	// "summary_message_id", "preserve_recent", "compression_mode",
	// "focus", "key_points", "confidence"}; with nothing to compact, only
	// an output saying so.
	EffectMemoryCompact EffectType = "memory_compact"
	// EffectMemoryNote stores a note as an artifact (needs
	// runtime.Config.Artifacts) and indexes it as a memory_note span.
	// Payload: "note" (required, non-blank), "tags" (string→string;
	// "kind" is dropped), "sources" ({"run_id", "span_ids",
	// "message_ids"}), "location", "scope" (run by default, session,
	// global: whose span index gets the span), "target_run_id" (the base
	// run instead of the requesting one), "keep_in_context" or
	// "keepInContext" (also insert the note into the base run's
	// context.messages). Result: a tool envelope (remember_note, id
	// memory), output "Stored memory_note span_id=<id> tags=<json>", meta
	// {"span_id", "created_at", "note_preview", "kept_in_context"?:
	// {"inserted", "skipped", "error"?}}.
	EffectMemoryNote EffectType = "memory_note"
	// EffectMemoryRehydrate inserts archived spans into context.messages of
	// the requesting run or "target_run_id" (needs
	// runtime.Config.Artifacts). Payload: "span_ids" (or "span_id";
	// required; artifact ids or 1-based indices newest first),
	// "placement" (after_summary by default, after_system, end),
	// "dedup_by" (message_id by default; another value disables dedup),
	// "max_messages" (a cap over all spans; none by default),
	// "recall_level". A conversation_span inserts its messages, a
	// memory_note one system message; other kinds are skipped. Result,
	// not a tool envelope: {"inserted", "skipped", "artifacts":
	// [{"span_id", "inserted", "skipped", "error", "kind", "preview"}],
	// "effort", "warnings"}, or {"inserted": 0, "skipped": 0,
	// "artifacts": []} when no span is named.
	EffectMemoryRehydrate EffectType = "memory_rehydrate"
	// EffectMemoryKGAssert, EffectMemoryKGQuery and EffectMemoryKGResolve
	// are the knowledge-graph effects of AbstractMemory. No built-in
	// handler: payloads (assertions; subject/predicate/object filters; a
	// label to resolve) and results ({"ok", "count", …}) are the host
	// handler's.
	EffectMemoryKGAssert  EffectType = "memory_kg_assert"
	EffectMemoryKGQuery   EffectType = "memory_kg_query"
	EffectMemoryKGResolve EffectType = "memory_kg_resolve"
	// EffectVarsQuery reads a value of the run's vars, or of run
	// "target_run_id". Payload: "path" (or "var_path"; default
	// scratchpad; dot form a.b[0].c or JSON pointer /a/b/0/c, see
	// runtime.ResolvePath), "keys_only" (an object gives its sorted
	// "keys", a list its "length", instead of "value"). Result: a tool
	// envelope (inspect_vars, id vars) whose output is the JSON text
	// (indent 2, sorted keys) of {"path", "type", "value"}, type being
	// the Python type name (dict, list, str, int, float, bool, NoneType);
	// a path that does not resolve, or an unknown target run, completes
	// with success false and the error.
	EffectVarsQuery EffectType = "vars_query"
	// EffectStartSubworkflow starts a child run of payload "workflow_id"
	// (a registered id; required) with "vars" (object; the parent's
	// non-blank workspace_root, workspace_access_mode,
	// workspace_allowed_paths and workspace_ignored_paths are added unless
	// set), session "session_id"/"sessionId" (default: the parent's) and
	// id "run_id" (default: derived from the parent, the idempotency key
	// and the attempt; a named child is created if absent, else taken as
	// it is). Modes:
	//   - sync (default): the child is ticked inline (up to 100 steps).
	//     Completed: result {"sub_run_id", "output"}, plus "node_traces"
	//     with "include_traces". Failed: the effect fails "Subworkflow
	//     '<id>' failed: <error>". Waiting: the parent waits (reason
	//     subworkflow, key subworkflow:<child id>). Still running, or
	//     cancelled alone: fails "Unexpected subworkflow status: <status>".
	//   - "async": completes at once with {"sub_run_id", "async": true};
	//     the child is driven after the parent's tick.
	//   - "async" and "wait": the parent waits as above.
	// The kernel resumes a waiting parent when its child ends, with
	// {"sub_run_id", "output"} (plus "node_traces" with include_traces);
	// output is {"success": false, "error", "status"} for a failed or
	// cancelled child. With "wrap_as_tool_result" the results, the
	// registry and child failures and that resume are tool envelopes
	// (name "tool_name"/"toolName", default start_subworkflow; id
	// "call_id"/"callId", default subworkflow) whose output for a
	// completed child is {"rendered", "answer", "sub_run_id", "report"?}.
	EffectStartSubworkflow EffectType = "start_subworkflow"

	// EffectResume is the pseudo effect type of resume ledger records; it
	// is never requested by a node. Such a record's payload is
	// {"wait_reason", "wait_key", "resume_to_node", "result_key",
	// "payload"}, its result {"resumed": true}.
	EffectResume EffectType = "resume"
)

// EffectTypes lists every effect type a node may request.
func EffectTypes() []EffectType {
	return []EffectType{
		EffectWaitEvent, EffectWaitUntil, EffectAskUser, EffectAnswerUser, EffectEmitEvent,
		EffectLLMCall, EffectModelResidency, EffectToolCalls,
		EffectMemoryQuery, EffectMemoryTag, EffectMemoryCompact, EffectMemoryNote, EffectMemoryRehydrate,
		EffectMemoryKGAssert, EffectMemoryKGQuery, EffectMemoryKGResolve,
		EffectVarsQuery, EffectStartSubworkflow,
	}
}

// StepStatus is the status of a ledger record.
type StepStatus string

// Step statuses. Cancelled marks an attempt interrupted by a cancel.
const (
	StepStarted   StepStatus = "started"
	StepCompleted StepStatus = "completed"
	StepWaiting   StepStatus = "waiting"
	StepFailed    StepStatus = "failed"
	StepCancelled StepStatus = "cancelled"
)

// StepStatuses lists every step status.
func StepStatuses() []StepStatus {
	return []StepStatus{StepStarted, StepCompleted, StepWaiting, StepFailed, StepCancelled}
}
