package runtime

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// CompactionLLMWorkflowID is the workflow of the child run MEMORY_COMPACT
// starts to summarise: one LLM_CALL of vars.context.prompt (result key
// _temp.llm), completing with {"response": <the LLM result>}. Every
// registry serves it (builtinWorkflows).
const CompactionLLMWorkflowID = "wf_memory_compact_llm"

// compactionLLMWorkflow is Python's inline wf_memory_compact_llm. Python's
// node closes over the payload it built; ours reads it back from the
// child's vars (the prompt, and _limits copied from the compacted run),
// as a node must rebuild its plan from the run after a restart.
func compactionLLMWorkflow() *Workflow {
	return &Workflow{ID: CompactionLLMWorkflowID, Entry: "llm", Nodes: map[string]NodeFunc{
		"llm": func(ctx context.Context, run *durable.RunState, rc *RunContext) (StepPlan, error) {
			c, _ := run.Vars["context"].(map[string]any)
			payload := map[string]any{"prompt": c["prompt"]}
			if n, ok := compactionMaxTokens(run.Vars["_limits"]); ok {
				payload["params"] = map[string]any{"max_tokens": n}
			}
			return Request(&durable.Effect{Type: durable.EffectLLMCall, Payload: payload, ResultKey: "_temp.llm"}, "done"), nil
		},
		"done": func(ctx context.Context, run *durable.RunState, rc *RunContext) (StepPlan, error) {
			temp, _ := run.Vars["_temp"].(map[string]any)
			return Complete(map[string]any{"response": pyjson.Clone(temp["llm"])}), nil
		},
	}}
}

// compactionMaxTokens is Python's best-effort summary budget:
// int(_limits.max_output_tokens) when that is set and int() takes it, a
// value past int64 kept exact as Python's int keeps it.
func compactionMaxTokens(limits any) (any, bool) {
	m, _ := limits.(map[string]any)
	v := m["max_output_tokens"]
	if v == nil {
		return nil, false
	}
	n, err := pyval.ToBigInt(v)
	if err != nil {
		return nil, false
	}
	return pyval.BigIntValue(n), true
}

// compactionUnavailable are the words of an LLM answer that is a
// transport error rather than a summary (Python's list, matched in the
// lower-cased answer).
var compactionUnavailable = []string{
	"operation not permitted", "failed to connect", "connection refused",
	"timed out", "timeout", "not running", "model not found",
}

// MEMORY_COMPACT: archives the older part of context.messages of the
// requesting run (or payload.target_run_id) and replaces it with one
// system summary message (spec §3.8, Python's _handle_memory_compact).
// Messages split into system / older / recent (the last preserve_recent
// non-system ones); the older ones are summarised by a child run of
// wf_memory_compact_llm (one LLM_CALL, so the host must wire an LLM_CALL
// handler), archived as a JSON artifact {messages, span, created_at}
// tagged kind=conversation_span, and indexed as a conversation_span span.
//
// Durability: a pass is named by the effect's idempotency key and a
// digest of the older messages it removes (as read, before the ids and
// timestamps it generates): the artifact id derives from both, the
// summariser child's id from the artifact id and the attempt
// (childRunID), and the ids of messages that had none from both. So a
// replay of the same attempt over an unchanged target (a kill after the
// child ended, the requesting run's commit lost) finds the ended child
// and reads its answer instead of calling the LLM again, and finds the
// archive and keeps it as stored; while a target whose older part
// changed meanwhile (a retry after "the messages … changed" or "owner
// busy", a replay after it got a message) gets a new child and a new
// archive holding exactly the messages removed, as Python archives
// split.older_messages on every run of the handler. The summary message
// id derives from the key alone: the write puts it in the target's span
// index, which is how a replay (the target's write landed, the older
// messages and their digest gone from it) knows not to compact again; it
// then rebuilds the result from that span. Only one pass of an effect
// lands (the write checks under the owner's lock), so the id stays
// unique. A completed record replayed without its state (RerunOnReplay)
// makes the requesting run's changes again under the recorded ids, from
// the recorded child, without driving it.
func handleMemoryCompact(ctx context.Context, req *EffectRequest) (Outcome, error) {
	out, err := memoryCompact(ctx, req)
	var cancelled compactCancelled
	if errors.As(err, &cancelled) {
		return cancelledOutcome(cancelled.cause), nil
	}
	if err != nil {
		return memOutcome(err)
	}
	return out, nil
}

// compactRequest is a MEMORY_COMPACT's payload, read as Python does.
type compactRequest struct {
	toolName, callID string
	targetID         string
	preserveRecent   *big.Int // Python's int, any size, >= 0
	mode             string
	focus            string // "" = None
}

func readCompactRequest(p map[string]any) compactRequest {
	c := compactRequest{
		toolName: pyStrOr(p["tool_name"], "compact_memory"),
		callID:   pyStrOr(p["call_id"], "memory"),
	}
	if v := p["target_run_id"]; v != nil { // str(x).strip() or None
		c.targetID = pyval.Strip(pyval.Str(v))
	}
	// int(payload.get("preserve_recent", 6) or 6), 6 when int() refuses;
	// kept exact past int64 (1e20 is 10**20, more than any run's messages).
	c.preserveRecent = big.NewInt(6)
	if v := p["preserve_recent"]; truthy(v) {
		if n, err := pyval.ToBigInt(v); err == nil {
			c.preserveRecent = n
		}
	}
	if c.preserveRecent.Sign() < 0 {
		c.preserveRecent = new(big.Int)
	}
	c.mode = pyval.Lower(pyval.Strip(pyStrOr(p["compression_mode"], "standard")))
	if c.mode != "light" && c.mode != "standard" && c.mode != "heavy" {
		c.mode = "standard"
	}
	if s, ok := p["focus"].(string); ok {
		c.focus = pyval.Strip(s)
	}
	return c
}

// compactSplit is Python's CompactionSplit.
type compactSplit struct{ system, older, recent []any }

func memoryCompact(ctx context.Context, req *EffectRequest) (Outcome, error) {
	arts, err := requireArtifacts(req)
	if err != nil {
		return Outcome{}, err
	}
	EnsureNamespaces(req.Run.Vars)
	c := readCompactRequest(req.Effect.Payload)
	target, err := baseRunByID(ctx, req, c.targetID)
	if err != nil {
		return Outcome{}, err
	}
	if skipOnReplay(req, target.RunID) {
		// The other run's changes were committed before the record.
		return Completed(nil), nil
	}
	key := req.IdempotencyKey
	childID, artID, summaryID := "", "", ""
	if key != "" {
		summaryID = derivedMessageID("memory_summary\x00" + key)
	}
	replay := req.ReplayedResult != nil
	if replay {
		rec := recordedMeta(req.ReplayedResult)
		id, _ := rec["span_id"].(string)
		if !artifact.ValidID(id) {
			return Completed(nil), nil // an early answer: it changed nothing
		}
		artID = id
		summaryID, _ = rec["summary_message_id"].(string)
		if s, ok := rec["llm_run_id"].(string); ok {
			childID = s
		} else {
			childID = "" // Python's injected summarizer: no child to read
		}
	}

	if err := loadSpanIndex(ctx, arts, target); err != nil {
		return Outcome{}, err
	}
	if span := findLanded(spanList(target), artID, summaryID); span != nil {
		// The compaction landed already (a replay after the target's write
		// was committed): its result again, nothing compacted twice.
		if !replay {
			childID = compactionChildID(req, spanArtifactID(span))
		}
		return compactedAgain(ctx, req, c, span, childID)
	}

	cx, ok := target.Vars["context"].(map[string]any)
	if !ok {
		return Outcome{}, failf("MEMORY_COMPACT requires vars.context to be a dict")
	}
	raw := asList(cx["messages"])
	if len(raw) == 0 {
		return Completed(toolResult(c.callID, c.toolName, true, "No messages to compact.", "")), nil
	}
	normalized := normalizeMessages(raw)
	split := splitForCompaction(normalized, c.preserveRecent)
	if len(split.older) == 0 {
		return Completed(toolResult(c.callID, c.toolName, true,
			fmt.Sprintf("Nothing to compact (non-system messages <= preserve_recent=%s).", c.preserveRecent), "")), nil
	}
	// The pass: the key and what it removes, read before anything is
	// generated for it (a replay's clock differs).
	olderJSON, err := pyjson.Marshal(split.older, pyjson.Canonical)
	if err != nil {
		return Outcome{}, err
	}
	digest := sha256.Sum256(olderJSON)
	pass := key + "\x00older " + hex.EncodeToString(digest[:])
	now := memNow(req)
	fillGenerated(normalized, key, pass, now)
	if !replay {
		if key != "" {
			artID = artifact.ComputeID(target.RunID, []byte("memory_compact\x00"+pass))
		}
		childID = compactionChildID(req, artID)
	}

	// 1) The summary, from the child run.
	var response any
	if replay {
		response, err = endedChildResponse(ctx, req, childID)
	} else {
		response, err = summariseInChild(ctx, req, target, split.older, c, childID)
	}
	if err != nil {
		return Outcome{}, err
	}
	sum, err := parseCompactionAnswer(response)
	if err != nil {
		return Outcome{}, err
	}

	// 2) The archive: kept as first stored when a replay finds it (its
	// id names these very older messages).
	spanMeta := spanMetaOf(split.older)
	createdAt := now
	stored := false
	if artID != "" {
		if prev, err := artifact.LoadJSON(ctx, arts, artID); err == nil {
			if m, ok := prev.(map[string]any); ok {
				if sm, ok := m["span"].(map[string]any); ok {
					spanMeta, stored = sm, true
				}
				if t, ok := m["created_at"].(string); ok && t != "" {
					createdAt = t
				}
			}
		}
	}
	if !stored {
		tags := map[string]string{
			"kind": "conversation_span", "compression_mode": c.mode,
			"preserve_recent": c.preserveRecent.String(),
		}
		if c.focus != "" {
			tags["focus"] = c.focus
		}
		content := map[string]any{"messages": split.older, "span": spanMeta, "created_at": createdAt}
		meta, err := artifact.PutJSON(ctx, arts, content, artifact.PutParams{RunID: target.RunID, Tags: tags, ArtifactID: artID})
		if err != nil {
			return Outcome{}, fmt.Errorf("archiving the compacted messages of run %s: %w", target.RunID, err)
		}
		artID = meta.ArtifactID
	}
	if summaryID == "" {
		summaryID = derivedMessageID("memory_summary\x00" + artID)
	}

	// 3) The target run: system + summary + recent, and the span.
	count, _ := AsInt(spanMeta["message_count"])
	summaryMeta := map[string]any{
		"message_id": summaryID, "kind": "memory_summary", "compression_mode": c.mode,
		"preserve_recent": pyval.BigIntValue(c.preserveRecent), "source_artifact_id": artID,
		"source_message_count":   count,
		"source_from_timestamp":  spanMeta["from_timestamp"],
		"source_to_timestamp":    spanMeta["to_timestamp"],
		"source_from_message_id": spanMeta["from_message_id"],
		"source_to_message_id":   spanMeta["to_message_id"],
	}
	if c.focus != "" {
		summaryMeta["focus"] = c.focus
	}
	summaryMsg := map[string]any{
		"role":      "system",
		"content":   "[CONVERSATION HISTORY SUMMARY span_id=" + artID + "]: " + sum.text,
		"timestamp": createdAt,
		"metadata":  summaryMeta,
	}
	messages := append(append(append([]any{}, split.system...), summaryMsg), split.recent...)
	span := map[string]any{
		"kind": "conversation_span", "artifact_id": artID, "created_at": createdAt,
		"summary_message_id": summaryID,
		"from_timestamp":     spanMeta["from_timestamp"], "to_timestamp": spanMeta["to_timestamp"],
		"from_message_id": spanMeta["from_message_id"], "to_message_id": spanMeta["to_message_id"],
		"message_count": count, "compression_mode": c.mode, "focus": nullable(c.focus),
	}
	if req.Run.ActorID != "" {
		span["created_by"] = req.Run.ActorID
	}
	readBefore, err := pyjson.Marshal(raw, pyjson.Canonical)
	if err != nil {
		return Outcome{}, err
	}
	var landed map[string]any
	err = writeOwner(ctx, req, memOwner{id: target.RunID}, func(run *durable.RunState) error {
		landed = nil
		if err := loadSpanIndex(ctx, arts, run); err != nil {
			return err
		}
		if landed = findLanded(spanList(run), artID, summaryID); landed != nil {
			return nil // this effect's compaction is there already
		}
		rc := namespace(run.Vars, "context")
		if run != req.Run {
			// Loaded again for the write: messages another writer added
			// since they were read would be lost with the ones replaced.
			cur, err := pyjson.Marshal(asList(rc["messages"]), pyjson.Canonical)
			if err != nil || string(cur) != string(readBefore) {
				return failf("MEMORY_COMPACT: the messages of run %s changed during the compaction; retry", run.RunID)
			}
		}
		rc["messages"] = pyjson.Clone(messages)
		if run.Output != nil {
			run.Output["messages"] = pyjson.Clone(messages)
		}
		appendSpan(run, pyjson.CloneObject(span))
		return nil
	})
	if err != nil {
		return Outcome{}, err
	}
	if landed != nil && spanArtifactID(landed) != artID {
		// Another pass of this effect got there first: its result.
		return compactedAgain(ctx, req, c, landed, compactionChildID(req, spanArtifactID(landed)))
	}
	text := fmt.Sprintf("Compacted %d messages into span_id=%s.", len(split.older), artID)
	return Completed(memoryEnvelope(c.callID, c.toolName, true, text, "",
		compactMeta(c, childID, artID, summaryID, sum))), nil
}

// compactedAgain is the result of a compaction whose span the target
// already holds, rebuilt from the span and the child's answer.
func compactedAgain(ctx context.Context, req *EffectRequest, c compactRequest, span map[string]any, childID string) (Outcome, error) {
	response, err := endedChildResponse(ctx, req, childID)
	if err != nil {
		return Outcome{}, err
	}
	sum, err := parseCompactionAnswer(response)
	if err != nil {
		sum = compactionSummary{} // its words were good enough once
	}
	artID := spanArtifactID(span)
	summaryID, _ := span["summary_message_id"].(string)
	n, _ := AsInt(span["message_count"])
	text := fmt.Sprintf("Compacted %d messages into span_id=%s.", n, artID)
	return Completed(memoryEnvelope(c.callID, c.toolName, true, text, "",
		compactMeta(c, childID, artID, summaryID, sum))), nil
}

func compactMeta(c compactRequest, childID, artID, summaryID string, sum compactionSummary) map[string]any {
	kp := sum.keyPoints
	if kp == nil {
		kp = []any{}
	}
	return map[string]any{
		"llm_run_id": nullable(childID), "span_id": artID, "summary_message_id": summaryID,
		"preserve_recent": pyval.BigIntValue(c.preserveRecent), "compression_mode": c.mode, "focus": nullable(c.focus),
		"key_points": kp, "confidence": sum.confidence,
	}
}

// recordedMeta is the meta of a recorded tool-envelope result.
func recordedMeta(result any) map[string]any {
	res, _ := result.(map[string]any)
	list, _ := res["results"].([]any)
	if len(list) == 0 {
		return nil
	}
	first, _ := list[0].(map[string]any)
	meta, _ := first["meta"].(map[string]any)
	return meta
}

// compactionChildID is the summariser child of a pass archiving under
// artID: one per archive and attempt (a retry asks the LLM again, as
// Python does), the same for a replay of the attempt. Without a key
// there is nothing to find again: a fresh id.
func compactionChildID(req *EffectRequest, artID string) string {
	if req.IdempotencyKey == "" {
		return NewUUID()
	}
	return childRunID(req.Run.RunID, req.IdempotencyKey+"\x00memory_compact "+artID, req.Attempt)
}

// findLanded is the span a pass of this effect put in the index: the
// recorded archive's (artID) or the one naming the effect's summary
// message id, or nil.
func findLanded(spans []any, artID, summaryID string) map[string]any {
	if s := findSpan(spans, artID); s != nil {
		return s
	}
	for _, s := range spans {
		m, _ := s.(map[string]any)
		if id, _ := m["summary_message_id"].(string); id != "" && id == summaryID {
			return m
		}
	}
	return nil
}

// normalizeMessages is Python's normalize_messages without what it
// generates: copies of the object messages with a string role (default
// "user") and content and an object metadata. fillGenerated then adds
// the missing message ids and timestamps, once the pass is known.
func normalizeMessages(raw []any) []any {
	out := make([]any, 0, len(raw))
	for _, x := range raw {
		m, ok := x.(map[string]any)
		if !ok {
			continue
		}
		m = pyjson.CloneObject(m)
		m["role"] = pyStrOr(m["role"], "user")
		if m["content"] == nil {
			m["content"] = ""
		} else {
			m["content"] = pyval.Str(m["content"])
		}
		if _, ok := m["metadata"].(map[string]any); !ok {
			m["metadata"] = map[string]any{}
		}
		out = append(out, m)
	}
	return out
}

// fillGenerated gives the normalised messages lacking them a message_id
// (derived from the pass, so a replay of it names them as the first did)
// and a timestamp (now).
func fillGenerated(messages []any, key, pass, now string) {
	for i, x := range messages {
		m := x.(map[string]any)
		meta := m["metadata"].(map[string]any)
		if id, ok := meta["message_id"].(string); !ok || id == "" {
			meta["message_id"] = messageIDFor(key, pass, i)
		}
		if ts, ok := m["timestamp"].(string); !ok || pyval.Strip(ts) == "" {
			m["timestamp"] = now
		}
	}
}

// messageIDFor names the i-th message of a compaction that had none.
func messageIDFor(key, pass string, i int) string {
	if key == "" {
		return "msg_" + strings.ReplaceAll(NewUUID(), "-", "")
	}
	return derivedMessageID("memory_compact message\x00" + pass + "\x00" + strconv.Itoa(i))
}

// derivedMessageID is a stable "msg_<32 hex>" id, the shape of Python's
// f"msg_{uuid4().hex}".
func derivedMessageID(seed string) string {
	sum := sha256.Sum256([]byte(seed))
	return "msg_" + hex.EncodeToString(sum[:16])
}

// splitForCompaction is Python's split_for_compaction.
func splitForCompaction(messages []any, preserve *big.Int) compactSplit {
	var s compactSplit
	var conversation []any
	for _, m := range messages {
		if m.(map[string]any)["role"] == "system" {
			s.system = append(s.system, m)
		} else {
			conversation = append(conversation, m)
		}
	}
	switch {
	case preserve.Sign() == 0:
		s.older = conversation
	case big.NewInt(int64(len(conversation))).Cmp(preserve) <= 0:
		s.recent = conversation
	default: // preserve < len(conversation): an int
		cut := len(conversation) - int(preserve.Int64())
		s.older, s.recent = conversation[:cut], conversation[cut:]
	}
	return s
}

// spanMetaOf is Python's span_metadata_from_messages (messages non-empty).
func spanMetaOf(messages []any) map[string]any {
	first := messages[0].(map[string]any)
	last := messages[len(messages)-1].(map[string]any)
	fm, _ := first["metadata"].(map[string]any)
	lm, _ := last["metadata"].(map[string]any)
	return map[string]any{
		"from_timestamp": first["timestamp"], "to_timestamp": last["timestamp"],
		"from_message_id": fm["message_id"], "to_message_id": lm["message_id"],
		"message_count": int64(len(messages)),
	}
}

// compactionPrompt is Python's fallback prompt, word for word.
func compactionPrompt(older []any, mode, focus string) string {
	var b strings.Builder
	b.WriteString("You are compressing older conversation context for an agent runtime.\n" +
		"Write a faithful, compact summary that preserves decisions, constraints, names, file paths, commands, and open questions.\n" +
		"Do NOT invent details. If something is unknown, say so.\n" +
		"Compression mode: " + mode + "\n")
	if focus != "" {
		b.WriteString("Focus: " + focus + "\n")
	}
	b.WriteString("Return STRICT JSON with keys: summary (string), key_points (array of strings), confidence (number 0..1).\n\n" +
		"OLDER MESSAGES (to be archived):\n")
	for i, x := range older {
		m := x.(map[string]any)
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(pyval.Str(m["role"]) + ": " + pyval.Str(m["content"]))
	}
	b.WriteString("\n")
	return b.String()
}

// summariseInChild starts (or finds, on a replay) the summariser child
// and drives it inline, as a sync subworkflow is, and returns its
// response (the LLM_CALL result). The child is the requesting run's.
func summariseInChild(ctx context.Context, req *EffectRequest, target *durable.RunState, older []any, c compactRequest, childID string) (any, error) {
	rt := req.Runtime
	if _, ok := rt.Handler(durable.EffectLLMCall); !ok {
		// Checked before a child is made only to fail on it.
		return nil, failf("MEMORY_COMPACT requires an LLM_CALL handler to summarise the older messages; " +
			"none is registered (wire one through runtime.Config.Handlers)")
	}
	if syncDepth(ctx)+1 > maxSyncSubworkflowDepth {
		return nil, failf("MEMORY_COMPACT: sync subworkflows nested deeper than the limit of %d levels", maxSyncSubworkflowDepth)
	}
	limits, _ := target.Vars["_limits"].(map[string]any)
	limits = pyjson.CloneObject(limits)
	if limits == nil {
		limits = map[string]any{}
	}
	_, err := rt.store.RunGet(ctx, childID)
	switch {
	case errors.Is(err, store.ErrNotFound):
		vars := map[string]any{
			"context":    map[string]any{"prompt": compactionPrompt(older, c.mode, c.focus)},
			"scratchpad": map[string]any{}, "_runtime": map[string]any{}, "_temp": map[string]any{},
			"_limits": limits,
		}
		_, err = rt.Start(ctx, StartParams{
			WorkflowID: CompactionLLMWorkflowID, Vars: vars, ActorID: req.Run.ActorID,
			SessionID: req.Run.SessionID, ParentRunID: req.Run.RunID, RunID: childID,
		})
		var notStored storeFailure
		if err != nil && (errors.As(err, &notStored) || ctx.Err() != nil) {
			// The create may have landed with its answer lost: the tick
			// stops at its checkpoint and the replay finds the child.
			return nil, fmt.Errorf("%w: compaction LLM subworkflow (run %s) not started: %w", errEffectInterrupted, childID, err)
		}
		if err != nil {
			return nil, failf("Compaction LLM subworkflow failed: %v", err)
		}
	case err != nil:
		return nil, fmt.Errorf("%w: loading compaction LLM subworkflow %s: %w", errEffectInterrupted, childID, err)
	}
	child, err := driveSyncChild(ctx, req, "compaction LLM subworkflow", childID)
	if err != nil {
		return nil, err
	}
	switch child.Status {
	case durable.RunCompleted:
		return childResponse(ctx, rt, child)
	case durable.RunWaiting:
		return nil, failf("MEMORY_COMPACT does not support waiting subworkflows yet")
	case durable.RunFailed:
		if child.Error != "" {
			return nil, failf("%s", child.Error)
		}
		return nil, failf("Compaction LLM subworkflow failed")
	case durable.RunCancelled:
		cause, covered, err := rt.cancelCovering(ctx, child, req.Run)
		if err != nil {
			return nil, fmt.Errorf("%w: compaction LLM subworkflow (run %s): %w", errEffectInterrupted, childID, err)
		}
		if covered {
			return nil, compactCancelled{cause}
		}
		return nil, failf("Compaction LLM subworkflow was cancelled")
	}
	return nil, failf("Unexpected compaction LLM subworkflow status: %s", child.Status)
}

// compactCancelled ends the attempt cancelled: a tree cancel covering the
// requesting run ended the summariser child.
type compactCancelled struct{ cause cancelCause }

func (compactCancelled) Error() string { return "cancelled" }

// endedChildResponse reads the response of a summariser child that ended
// before (a replay), without driving it: nil when there is none (no
// child, or one that did not complete), which summarises as
// "(summary unavailable)".
func endedChildResponse(ctx context.Context, req *EffectRequest, childID string) (any, error) {
	if childID == "" {
		return nil, nil
	}
	child, err := req.Runtime.store.RunGet(ctx, childID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: loading compaction LLM subworkflow %s: %w", errEffectInterrupted, childID, err)
	}
	if child.Status != durable.RunCompleted {
		return nil, nil
	}
	return childResponse(ctx, req.Runtime, child)
}

// childResponse is output.response of a completed summariser child, with
// what a store's offloading moved out of it put back.
func childResponse(ctx context.Context, rt *Runtime, child *durable.RunState) (any, error) {
	payload := map[string]any{"output": ChildOutput(child)}
	if err := rt.restoreChildValues(ctx, child.RunID, payload); err != nil {
		return nil, fmt.Errorf("%w: compaction LLM subworkflow (run %s): %w", errEffectInterrupted, child.RunID, err)
	}
	out, _ := payload["output"].(map[string]any)
	return out["response"], nil
}

// compactionSummary is what the LLM's answer gave.
type compactionSummary struct {
	text       string
	keyPoints  []any
	confidence any // float64 or nil
}

// parseCompactionAnswer reads the LLM result as Python does: its content
// trimmed, a failure when it reads as a transport error, else the JSON
// object it holds (a fenced block: from the first "{" to the last "}")
// gives summary, key_points (≤ 20, strings and numbers as text) and
// confidence; content that is not such JSON is the summary as it is.
func parseCompactionAnswer(response any) (compactionSummary, error) {
	resp, _ := response.(map[string]any)
	text := ""
	if v := resp["content"]; v != nil {
		text = pyval.Strip(pyval.Str(v))
	}
	lowered := pyval.Lower(text)
	for _, w := range compactionUnavailable {
		if strings.Contains(lowered, w) {
			return compactionSummary{}, failf("Compaction LLM unavailable: %s", text)
		}
	}
	sum := compactionSummary{text: text, keyPoints: []any{}}
	if text != "" {
		candidate := text
		if strings.Contains(candidate, "```") {
			start, end := strings.Index(candidate, "{"), strings.LastIndex(candidate, "}")
			if 0 <= start && start < end {
				candidate = candidate[start : end+1]
			}
		}
		if parsed, err := pyval.LoadsJSON(candidate); err == nil {
			if obj, ok := parsed.(map[string]any); ok {
				if s := obj["summary"]; s != nil {
					if t := pyval.Strip(pyStrOrEmpty(s)); t != "" {
						sum.text = t
					}
				}
				if kp, ok := obj["key_points"].([]any); ok {
					for _, x := range kp {
						if len(sum.keyPoints) == 20 {
							break
						}
						switch v := x.(type) {
						case string:
							sum.keyPoints = append(sum.keyPoints, v)
						case bool:
							sum.keyPoints = append(sum.keyPoints, pyval.Str(v)) // an int to Python
						default:
							if pyval.IsRealNumber(v) {
								sum.keyPoints = append(sum.keyPoints, pyval.Str(v))
							}
						}
					}
				}
				switch v := obj["confidence"].(type) {
				case bool:
					sum.confidence = map[bool]float64{false: 0, true: 1}[v]
				default:
					if pyval.IsRealNumber(v) {
						// A NaN or an infinity (Python's json takes them) is
						// no JSON to record: left out, as an unreadable one.
						if f, err := pyval.ToFloat(v); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
							sum.confidence = f
						}
					}
				}
			}
		}
	}
	if sum.text = pyval.Strip(sum.text); sum.text == "" {
		sum.text = "(summary unavailable)"
	}
	return sum, nil
}
