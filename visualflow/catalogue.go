package visualflow

import (
	"slices"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/visualflow/builtin"
)

// handlerKind is how an exec node is executed (spec §3.5).
type handlerKind int

const (
	handlerFunction   handlerKind = iota // function node (§4.2)
	handlerScheduler                     // sequence, parallel, loop, for, while (§4.6)
	handlerJoin                          // join_exec (§6.12)
	handlerAgent                         // agent state machine (§5.6)
	handlerOnEvent                       // on_event listener (§5.7)
	handlerOnSchedule                    // on_schedule (§5.7)
	handlerEmitEvent                     // emit_event (§5.7)
	handlerSubflow                       // subflow (§5.5)
	handlerEffect                        // generic effect node (§5.1)
	handlerVarWriter                     // set_var, set_vars, set_var_property (§6.6)
	handlerAddMessage                    // add_message, exec form (§6.6)
	handlerMemact                        // memact_compose (§6.8)
)

// effectTypes maps generic effect node types to the runtime effect they
// emit (§5.1).
var effectTypes = map[string]durable.EffectType{
	"ask_user": durable.EffectAskUser, "answer_user": durable.EffectAnswerUser,
	"llm_call": durable.EffectLLMCall, "generate_image": durable.EffectLLMCall, "edit_image": durable.EffectLLMCall,
	"image_to_image": durable.EffectLLMCall, "upscale_image": durable.EffectLLMCall, "image_upscale": durable.EffectLLMCall,
	"generate_video": durable.EffectLLMCall, "text_to_video": durable.EffectLLMCall, "image_to_video": durable.EffectLLMCall,
	"generate_voice": durable.EffectLLMCall, "generate_music": durable.EffectLLMCall, "transcribe_audio": durable.EffectLLMCall,
	"listen_voice": durable.EffectWaitEvent, "tool_calls": durable.EffectToolCalls, "call_tool": durable.EffectToolCalls,
	"model_residency": durable.EffectModelResidency, "wait_until": durable.EffectWaitUntil, "wait_event": durable.EffectWaitEvent,
	"memory_note": durable.EffectMemoryNote, "memory_query": durable.EffectMemoryQuery, "memory_tag": durable.EffectMemoryTag,
	"memory_compact": durable.EffectMemoryCompact, "memory_rehydrate": durable.EffectMemoryRehydrate,
	"memory_kg_assert": durable.EffectMemoryKGAssert, "memory_kg_query": durable.EffectMemoryKGQuery,
	"memory_kg_resolve": durable.EffectMemoryKGResolve,
}

// functionTypes are the catalogue types implemented as function nodes
// besides the builtins (§3.5 "everything else").
var functionTypes = []string{
	"on_flow_start", "on_flow_end", "on_user_request", "on_agent_message", "if", "switch", "code", "function",
	"read_file", "write_file", "read_pdf", "write_pdf", "list_folder_files", "import_workspace_file",
	"read_artifact", "export_artifact",
}

// pureHostTypes are pure catalogue nodes backed by a host registry that
// this runtime does not have (§6.12): they evaluate to empty catalogues.
var pureHostTypes = []string{"provider_catalog", "provider_models", "model_catalog"}

// controlTypes are the schedulers.
var controlTypes = []string{"sequence", "parallel", "loop", "for", "while"}

// purePinlessTypes are classified pure when a node has no pin metadata
// (§2 rule 4), besides the builtin registry.
var purePinlessTypes = []string{"get_var", "get_context", "bool_var", "var_decl", "break_object", "tool_parameters"}

// builtinRegistry is the Python builtin registry of §2 rule 4 (make_array
// and array_concat are not in it).
var builtinRegistry = []string{
	"add", "subtract", "multiply", "divide", "modulo", "power", "abs", "round", "random_int", "random_float",
	"concat", "split", "join", "format", "string_template", "uppercase", "lowercase", "trim", "substring",
	"length", "is_empty_string", "contains", "replace", "compare", "not", "and", "or", "coalesce", "get", "set",
	"merge", "make_object", "edit_json_schema", "make_context", "add_message", "make_meta", "make_scratchpad",
	"get_element", "get_random_element", "array_map", "array_filter", "array_length", "has_tools",
	"array_append", "array_dedup", "path_mux", "parse_json", "stringify_json", "format_tool_results",
	"agent_trace_report", "system_datetime", "literal_string", "literal_number", "literal_boolean",
	"literal_json", "literal_array", "tools_allowlist",
}

// handlerOf returns the handler kind of an exec node type.
func handlerOf(t string) handlerKind {
	switch {
	case slices.Contains(controlTypes, t):
		return handlerScheduler
	case t == "join_exec":
		return handlerJoin
	case t == "agent":
		return handlerAgent
	case t == "on_event":
		return handlerOnEvent
	case t == "on_schedule":
		return handlerOnSchedule
	case t == "emit_event":
		return handlerEmitEvent
	case t == "subflow":
		return handlerSubflow
	case t == "set_var" || t == "set_vars" || t == "set_var_property":
		return handlerVarWriter
	case t == "add_message":
		return handlerAddMessage
	case t == "memact_compose":
		return handlerMemact
	}
	if _, ok := effectTypes[t]; ok {
		return handlerEffect
	}
	return handlerFunction
}

// KnownType reports whether t is a node type of the catalogue (§6).
func KnownType(t string) bool {
	if t == "join_exec" || t == "agent" || t == "on_event" || t == "on_schedule" || t == "emit_event" ||
		t == "subflow" || t == "set_var" || t == "set_vars" || t == "set_var_property" || t == "memact_compose" {
		return true
	}
	if _, ok := effectTypes[t]; ok {
		return true
	}
	if slices.Contains(functionTypes, t) || slices.Contains(controlTypes, t) || slices.Contains(pureHostTypes, t) {
		return true
	}
	_, ok := builtin.Lookup(t)
	return ok || builtin.IsLiteral(t)
}

// Types returns every node type the compiler accepts, sorted.
func Types() []string {
	set := map[string]bool{}
	for _, t := range builtin.Types() {
		set[t] = true
	}
	for t := range effectTypes {
		set[t] = true
	}
	for _, list := range [][]string{functionTypes, pureHostTypes, controlTypes, {
		"join_exec", "agent", "on_event", "on_schedule", "emit_event", "subflow",
		"set_var", "set_vars", "set_var_property", "add_message", "memact_compose"}} {
		for _, t := range list {
			set[t] = true
		}
	}
	out := make([]string, 0, len(set))
	for t := range set {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}
