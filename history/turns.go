package history

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strings"

	"github.com/abstractframework/abstractgateway/artifact"
	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store/offload"
)

// runtimeEnvelope matches the metadata block a host may put before a user
// message: <runtime_metadata>{json}</runtime_metadata>.
var runtimeEnvelope = regexp.MustCompile(`(?is)^\s*<runtime_metadata>\s*(.*?)\s*</runtime_metadata>\s*`)

// splitEnvelope separates a leading runtime metadata envelope from the
// text a person typed. The metadata is nil when there is no envelope or
// it does not hold a JSON object.
func splitEnvelope(text string) (string, map[string]any) {
	raw := pyval.Strip(text)
	loc := runtimeEnvelope.FindStringSubmatchIndex(raw)
	if loc == nil {
		return raw, nil
	}
	meta, _ := pyjson.DecodeObject([]byte(pyval.Strip(raw[loc[2]:loc[3]])))
	return pyval.Strip(raw[loc[1]:]), meta
}

// extractPrompt finds what a turn asked: prompt, message or task (at the
// top or under context), else the last user message of context.messages.
func extractPrompt(vars map[string]any) (string, map[string]any) {
	in := inputOf(vars)
	ctx := object(in["context"])
	candidates := []any{in["prompt"], in["message"], in["task"], ctx["task"], ctx["message"]}
	for _, c := range candidates {
		if _, ok := nonBlankString(c); ok {
			return splitEnvelope(c.(string))
		}
	}
	msgs, _ := ctx["messages"].([]any)
	// The history holds earlier turns too: this turn's prompt is the
	// latest user message.
	for _, m := range slices.Backward(msgs) {
		msg := object(m)
		if role, _ := msg["role"].(string); pyval.Strip(role) != "user" {
			continue
		}
		content, _ := msg["content"].(string)
		if _, ok := nonBlankString(content); !ok {
			continue
		}
		prompt, meta := splitEnvelope(content)
		return prompt, mergeMessageMeta(meta, msg)
	}
	return "", nil
}

// mergeMessageMeta overlays a message's own runtime_metadata (or
// metadata.runtime_metadata) on the envelope's, skipping null and blank
// values; nil when nothing is left.
func mergeMessageMeta(envelope map[string]any, msg map[string]any) map[string]any {
	own := object(msg["runtime_metadata"])
	if own == nil {
		own = object(object(msg["metadata"])["runtime_metadata"])
	}
	if own == nil {
		return envelope
	}
	merged := map[string]any{}
	for k, v := range envelope {
		merged[k] = v
	}
	for k, v := range own {
		if v != nil && pyval.Strip(pyval.Str(v)) != "" {
			merged[k] = v
		}
	}
	if len(merged) == 0 {
		return nil
	}
	return merged
}

// answerKeys are the envelope members an answer is read from, in order.
var answerKeys = []string{"response", "answer", "message", "text", "content"}

// answer finds what a turn answered: from the run's output, else from
// recs, the run's own ledger.
func (e *exporter) answer(ctx context.Context, r *durable.RunState, recs []*durable.StepRecord) (string, map[string]any, error) {
	out, err := e.resolveOutput(ctx, r.RunID, r.Output)
	if err != nil {
		return "", nil, err
	}
	text, meta := answerFromOutput(out)
	if text != "" || len(recs) == 0 {
		return text, meta, nil // no ledger to read: the output's meta stays
	}
	text, meta = answerFromLedger(recs)
	return text, meta, nil
}

// maxResolvedOutputBytes bounds, in total, the offloaded output read to
// find one turn's answer (Python's _OFFLOADED_ANSWER_RESOLVE_MAX_BYTES).
const maxResolvedOutputBytes = 4 << 20

// resolveOutput returns the run's output with what an offloading run
// store moved out of it read back where answerFromOutput looks: the whole
// output replaced by a ref, then the result/output object, the answer
// members (the usual shape of a long answer: {"answer": <ref>}) and meta,
// in the order they are read. Nothing else is restored: the rest of an
// output (an agent's scratchpad, say) may hold any number of refs, and
// finding an answer is a bounded read, never an artifact walk. Only this
// run's output artifacts (tag source=run_output_offload) are read, at
// most maxResolvedOutputBytes in all; a missing, oversized, non-JSON,
// damaged or undecodable artifact leaves its ref: one bad artifact must
// not fail the export of intact runs and ledgers. Artifact store failures
// are still errors. out itself is not changed.
func (e *exporter) resolveOutput(ctx context.Context, runID string, out map[string]any) (map[string]any, error) {
	if out == nil || e.src.Artifacts == nil {
		return out, nil
	}
	r := &outputReader{st: e.src.Artifacts, runID: runID, budget: maxResolvedOutputBytes}
	resolved, err := r.resolve(ctx, out)
	if err != nil {
		return nil, err
	}
	root, _ := resolved.(map[string]any)
	if root == nil {
		return out, nil
	}
	root = maps.Clone(root) // members are replaced below; out stays as stored
	// answerFromOutput's nested envelope: result, else output.
	var nested map[string]any
	for _, k := range []string{"result", "output"} {
		v, err := r.member(ctx, root, k)
		if err != nil {
			return nil, err
		}
		if nested = object(v); nested != nil {
			nested = maps.Clone(nested)
			root[k] = nested
			break
		}
	}
found:
	for _, m := range []map[string]any{root, nested} {
		if m == nil {
			continue
		}
		for _, k := range answerKeys {
			v, err := r.member(ctx, m, k)
			if err != nil {
				return nil, err
			}
			if _, ok := nonBlankString(v); ok {
				break found
			}
		}
	}
	for _, m := range []map[string]any{root, nested} {
		if m == nil {
			continue
		}
		v, err := r.member(ctx, m, "meta")
		if err != nil {
			return nil, err
		}
		if object(v) != nil {
			break
		}
	}
	return root, nil
}

// outputReader reads back the offloaded values of one run's output under
// a total byte budget.
type outputReader struct {
	st     artifact.Store
	runID  string
	budget int64 // bytes still allowed
}

// member restores m[k] in place (m is the caller's copy) and returns it.
func (r *outputReader) member(ctx context.Context, m map[string]any, k string) (any, error) {
	v, ok := m[k]
	if !ok {
		return nil, nil
	}
	v, err := r.resolve(ctx, v)
	if err != nil {
		return nil, err
	}
	m[k] = v
	return v, nil
}

// resolve returns the content of v when v is a ref ({"$artifact": id})
// to one of the run's output artifacts that fits the budget: decoded
// JSON, or text as a string. The refs inside that content stay refs.
// Anything else, and an unreadable artifact, is returned as is.
func (r *outputReader) resolve(ctx context.Context, v any) (any, error) {
	ref, _ := v.(map[string]any)
	id, ok := artifact.RefID(ref)
	if !ok || len(ref) != 1 || !artifact.ValidID(id) {
		return v, nil
	}
	meta, err := r.st.Metadata(ctx, id)
	if errors.Is(err, artifact.ErrNotFound) {
		return v, nil // dangling
	}
	if err != nil {
		return nil, fmt.Errorf("reading the offloaded output of run %s: %w", r.runID, err)
	}
	ct := meta.ContentType
	if meta.Tags["source"] != offload.SourceRunOutput || meta.RunID != r.runID || meta.SizeBytes > r.budget ||
		!strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "text/") {
		return v, nil
	}
	_, content, err := r.st.Get(ctx, id)
	if errors.Is(err, artifact.ErrNotFound) || errors.Is(err, artifact.ErrDamaged) {
		return v, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the offloaded output of run %s: %w", r.runID, err)
	}
	if int64(len(content)) > r.budget {
		return v, nil // larger than its metadata said
	}
	r.budget -= int64(len(content))
	if strings.HasPrefix(ct, "text/") {
		return string(content), nil
	}
	decoded, err := pyjson.Decode(content)
	if err != nil {
		return v, nil
	}
	return decoded, nil
}

// answerFromOutput reads the answer envelope of a run's output, or of its
// nested result/output object.
func answerFromOutput(out map[string]any) (string, map[string]any) {
	if out == nil {
		return "", nil
	}
	nested := object(out["result"])
	if nested == nil {
		nested = object(out["output"])
	}
	answer := ""
	for _, m := range []map[string]any{out, nested} {
		if answer != "" {
			break
		}
		for _, k := range answerKeys {
			if s, ok := nonBlankString(m[k]); ok {
				answer = s
				break
			}
		}
	}
	meta := object(out["meta"])
	if meta == nil {
		meta = object(nested["meta"])
	}
	return answer, pyjson.CloneObject(meta)
}

// answerFromLedger finds the last answer a run's records hold: an
// ANSWER_USER message, or the output a completion record carries.
func answerFromLedger(recs []*durable.StepRecord) (string, map[string]any) {
	for _, rec := range slices.Backward(recs) {
		result := object(rec.Result)
		// Status and type compared stripped, as turnStats does.
		if durable.StepStatus(pyval.Strip(string(rec.Status))) == durable.StepCompleted && rec.Effect != nil &&
			durable.EffectType(pyval.Strip(string(rec.Effect.Type))) == durable.EffectAnswerUser {
			msg := result["message"]
			if msg == nil {
				msg = pyval.GetOr(rec.Effect.Payload, "message", "text", "content")
			}
			if text := textish(msg); text != "" {
				return text, nil
			}
		}
		switch out := result["output"].(type) {
		case string:
			if s := pyval.Strip(out); s != "" {
				return s, nil
			}
		case map[string]any:
			if text := firstTextish(out, "answer", "response", "message", "text", "content"); text != "" {
				return text, pyjson.CloneObject(object(out["meta"]))
			}
		}
	}
	return "", nil
}

// turnStats sums what a turn's records (its own and its descendants')
// cost: completed LLM calls and their token usage, completed tool calls,
// the wall-clock span of the records in whole milliseconds, and tokens
// per second over that span.
func turnStats(recs []*durable.StepRecord) map[string]any {
	var llmCalls, toolCalls, in, out, total int64
	var first, last int64
	seen := false
	for _, rec := range recs {
		at := rec.EndedAt
		if at.IsZero() {
			at = rec.StartedAt
		}
		if ms, ok := millis(at); ok {
			if !seen || ms < first {
				first = ms
			}
			if !seen || ms > last {
				last = ms
			}
			seen = true
		}
		// Python strips both before comparing, as the timeline does.
		if durable.StepStatus(pyval.Strip(string(rec.Status))) != durable.StepCompleted || rec.Effect == nil {
			continue
		}
		switch durable.EffectType(pyval.Strip(string(rec.Effect.Type))) {
		case durable.EffectLLMCall:
			llmCalls++
			if u := recordUsage(rec.Result); u != nil {
				in, out, total = satAdd(in, u.input), satAdd(out, u.output), satAdd(total, u.total)
			}
		case durable.EffectToolCalls:
			calls, _ := rec.Effect.Payload["tool_calls"].([]any)
			for _, c := range calls {
				if c != nil {
					toolCalls++
				}
			}
		}
	}
	duration := max(0, last-first)
	var tokS any
	if duration > 0 && total > 0 {
		tokS = float64(total) / (float64(duration) / 1000.0)
	}
	return map[string]any{
		"duration_ms": duration,
		"llm_calls":   llmCalls,
		"tool_calls":  toolCalls,
		"usage":       map[string]any{"input_tokens": in, "output_tokens": out, "total_tokens": total},
		"tok_s":       tokS,
	}
}

// usage is a token count summary.
type usage struct{ input, output, total int64 }

// recordUsage reads the usage of an LLM result (usage, token_usage or
// tokens, at the top or under output); nil when it has none.
func recordUsage(result any) *usage {
	res := object(result)
	u := object(pyval.GetOr(res, "usage", "token_usage", "tokens"))
	if u == nil {
		u = object(pyval.GetOr(object(res["output"]), "usage", "token_usage", "tokens"))
	}
	if u == nil {
		return nil
	}
	return parseUsage(u)
}

// parseUsage accepts the usual spellings of token counts (OpenAI's
// prompt/completion, short in/out); total defaults to input+output.
func parseUsage(u map[string]any) *usage {
	in, _ := tokenCount(firstPresent(u, "input_tokens", "prompt_tokens", "prompt", "input", "in"))
	out, _ := tokenCount(firstPresent(u, "output_tokens", "completion_tokens", "completion", "output", "out"))
	total, ok := tokenCount(firstPresent(u, "total_tokens", "total"))
	if !ok {
		total = satAdd(in, out)
	}
	if in <= 0 && out <= 0 && total <= 0 {
		return nil
	}
	return &usage{input: max(0, in), output: max(0, out), total: max(0, total)}
}

// satAdd is a+b clamped to the int64 range. Python's counts are exact
// ints; wrapping made a sum of large counts negative (or, clamped, 0), so
// a sum past the range is kept at its bound instead.
func satAdd(a, b int64) int64 {
	s := a + b
	switch {
	case a > 0 && b > 0 && s < 0:
		return math.MaxInt64
	case a < 0 && b < 0 && s >= 0:
		return math.MinInt64
	}
	return s
}

// firstPresent is the first non-null value of m's keys.
func firstPresent(m map[string]any, keys ...string) any {
	for _, k := range keys {
		if v := m[k]; v != nil {
			return v
		}
	}
	return nil
}

// tokenCount is Python's int(v) for a count: ints, floats truncated,
// integer strings; booleans, nulls and anything unparsable are not counts.
func tokenCount(v any) (int64, bool) {
	if _, isBool := v.(bool); isBool || v == nil {
		return 0, false
	}
	n, err := pyval.ToInt(v)
	return n, err == nil
}
