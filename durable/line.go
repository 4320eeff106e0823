package durable

import (
	"strconv"

	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// The Line style (json.dumps' default separators) is what the SQLite
// store and the JSONL ledger write on every commit, so runs and records
// are written in it member by member here, into the caller's buffer,
// instead of building their JSONValue (an ordered object, its nested
// objects and a string per timestamp) for the generic encoder: the same
// bytes and errors, some 100 fewer allocations per W2 run. Other styles
// (sorted keys, indentation) take JSONValue.

// lineObject writes one object's members in the Line style.
type lineObject struct {
	buf []byte
	n   int // members written
}

func (o *lineObject) open() { o.buf = append(o.buf, '{') }

func (o *lineObject) close() { o.buf = append(o.buf, '}') }

// key starts the member k, one of the wire objects' own names (plain
// ASCII, nothing to escape).
func (o *lineObject) key(k string) {
	o.sep()
	o.buf = append(o.buf, '"')
	o.buf = append(o.buf, k...)
	o.buf = append(o.buf, `": `...)
}

// anyKey starts a member whose name may need escaping.
func (o *lineObject) anyKey(k string) {
	o.sep()
	o.buf = pyjson.AppendString(o.buf, k, false)
	o.buf = append(o.buf, ": "...)
}

func (o *lineObject) sep() {
	if o.n > 0 {
		o.buf = append(o.buf, ", "...)
	}
	o.n++
}

func (o *lineObject) str(k, v string) {
	o.key(k)
	o.buf = pyjson.AppendString(o.buf, v, false)
}

// any writes k with v, a string or nil (emptyFields.str).
func (o *lineObject) any(k string, v any) {
	if s, ok := v.(string); ok {
		o.str(k, s)
		return
	}
	o.null(k)
}

// strOrNull is str writing "" as null when keepNull is set.
func (o *lineObject) strOrNull(k, v string, keepNull bool) {
	if v == "" && keepNull {
		o.null(k)
		return
	}
	o.str(k, v)
}

// nullStrKeep is nullStr writing "" as "" when keepEmpty is set.
func (o *lineObject) nullStrKeep(k, v string, keepEmpty bool) {
	if v == "" && keepEmpty {
		o.str(k, v)
		return
	}
	o.nullStr(k, v)
}

// nullStr writes "" as null.
func (o *lineObject) nullStr(k, v string) {
	if v == "" {
		o.null(k)
		return
	}
	o.str(k, v)
}

func (o *lineObject) null(k string) {
	o.key(k)
	o.buf = append(o.buf, "null"...)
}

// time writes the zero Time as null.
func (o *lineObject) time(k string, t Time) {
	o.key(k)
	if t.IsZero() {
		o.buf = append(o.buf, "null"...)
		return
	}
	o.buf = append(o.buf, '"')
	o.buf = appendTime(o.buf, t.Time)
	o.buf = append(o.buf, '"')
}

// keptTime writes t, or the text kept while t is what was read from it.
func (o *lineObject) keptTime(k string, t Time, kept *keptTime) {
	if text, ok := kept.value(t); ok {
		o.str(k, text)
		return
	}
	o.time(k, t)
}

// timeOrText writes t, or the text kept while t is zero (see timeOrText).
func (o *lineObject) timeOrText(k string, t Time, text string) {
	if t.IsZero() && text != "" {
		o.str(k, text)
		return
	}
	o.time(k, t)
}

// value writes a JSON value; path names it in errors, depth is its level.
func (o *lineObject) value(k string, v any, path string, depth int) error {
	o.key(k)
	var err error
	o.buf, err = pyjson.AppendMember(o.buf, v, pyjson.Line, path, depth)
	return err
}

// appendRecordLine is AppendRecord in the Line style.
func appendRecordLine(buf []byte, s *StepRecord) ([]byte, error) {
	if s.absent != 0 {
		// Read without some members (an older writer's record), which it
		// is written without: rare, so through JSONValue.
		return pyjson.Append(buf, s.JSONValue(true), pyjson.Line, "")
	}
	o := lineObject{buf: buf}
	o.open()
	o.strOrNull("run_id", s.RunID, s.nullRead&nullRunID != 0)
	o.strOrNull("step_id", s.StepID, s.nullRead&nullStepID != 0)
	o.strOrNull("node_id", s.NodeID, s.nullRead&nullNodeID != 0)
	o.strOrNull("status", string(s.Status), s.nullRead&nullStatus != 0)
	if s.Effect == nil {
		o.null("effect")
	} else {
		o.key("effect")
		e := lineObject{buf: o.buf}
		e.open()
		// Members the effect was read without stay out (Effect.absent).
		if s.Effect.writesType() {
			e.strOrNull("type", string(s.Effect.Type), s.Effect.typeNull)
		}
		if s.Effect.writesPayload() {
			if err := e.value("payload", s.Effect.payloadValue(), "effect.payload", 2); err != nil {
				return buf, err
			}
		}
		if s.Effect.writesResultKey() {
			e.any("result_key", s.Effect.emptyNotNull.str(emptyResultKey, s.Effect.ResultKey))
		}
		for _, k := range pyjson.SortedKeys(s.Effect.extra) {
			e.anyKey(k)
			var err error
			if e.buf, err = pyjson.AppendMember(e.buf, s.Effect.extra[k], pyjson.Line, "effect."+k, 2); err != nil {
				return buf, err
			}
		}
		e.close()
		o.buf = e.buf
	}
	if err := o.value("result", s.Result, "result", 1); err != nil {
		return buf, err
	}
	o.any("error", s.emptyNotNull.str(emptyError, s.Error))
	o.keptTime("started_at", s.StartedAt, s.startedRead)
	o.keptTime("ended_at", s.EndedAt, s.endedRead)
	o.any("actor_id", s.emptyNotNull.str(emptyActor, s.ActorID))
	o.any("session_id", s.emptyNotNull.str(emptySession, s.SessionID))
	if v, ok := s.attemptRead.value(s.Attempt); ok {
		if err := o.value("attempt", v, "attempt", 1); err != nil {
			return buf, err
		}
	} else {
		attempt := s.Attempt
		if attempt == 0 {
			attempt = 1
		}
		o.key("attempt")
		o.buf = strconv.AppendInt(o.buf, int64(attempt), 10)
	}
	o.any("idempotency_key", s.emptyNotNull.str(emptyIdempotencyKey, s.IdempotencyKey))
	o.nullStrKeep("prev_hash", s.PrevHash, s.emptyNotNull&emptyPrevHash != 0)
	o.nullStr("record_hash", s.RecordHash)
	o.nullStr("signature", s.Signature)
	if len(s.Extra) > 0 {
		for _, k := range pyjson.SortedKeys(s.Extra) {
			o.anyKey(k)
			var err error
			if o.buf, err = pyjson.AppendMember(o.buf, s.Extra[k], pyjson.Line, k, 1); err != nil {
				return buf, err
			}
		}
	}
	o.close()
	return o.buf, nil
}

// appendRunLine is AppendRun in the Line style.
func appendRunLine(buf []byte, r *RunState) ([]byte, error) {
	o := lineObject{buf: buf}
	o.open()
	o.str("run_id", r.RunID)
	o.str("workflow_id", r.WorkflowID)
	o.str("status", string(r.Status))
	o.str("current_node", r.CurrentNode)
	if err := o.value("vars", r.Vars, "vars", 1); err != nil { // nil is {}
		return buf, err
	}
	if w := r.Waiting; w == nil {
		o.null("waiting")
	} else {
		o.key("waiting")
		wo := lineObject{buf: o.buf}
		wo.open()
		wo.str("reason", string(w.Reason))
		wo.nullStr("wait_key", w.WaitKey)
		if w.Until.IsZero() && w.untilText != "" {
			wo.str("until", w.untilText)
		} else {
			wo.time("until", w.Until)
		}
		if w.ResumeToNode == "" && w.resumeToValue != nil {
			if err := wo.value("resume_to_node", w.resumeToValue, "waiting.resume_to_node", 2); err != nil {
				return buf, err
			}
		} else {
			wo.nullStr("resume_to_node", w.ResumeToNode)
		}
		wo.nullStr("result_key", w.ResultKey)
		wo.nullStr("prompt", w.Prompt)
		if raw := w.rawChoices(); raw != nil {
			if err := wo.value("choices", raw, "waiting.choices", 2); err != nil {
				return buf, err
			}
		} else if w.Choices == nil && w.choicesOther != nil {
			if err := wo.value("choices", w.choicesOther, "waiting.choices", 2); err != nil {
				return buf, err
			}
		} else if w.Choices == nil {
			wo.null("choices")
		} else {
			wo.key("choices")
			wo.buf = append(wo.buf, '[')
			for i, c := range w.Choices {
				if i > 0 {
					wo.buf = append(wo.buf, ", "...)
				}
				wo.buf = pyjson.AppendString(wo.buf, c, false)
			}
			wo.buf = append(wo.buf, ']')
		}
		wo.key("allow_free_text")
		wo.buf = strconv.AppendBool(wo.buf, w.AllowFreeText)
		if w.Details == nil {
			wo.null("details")
		} else if err := wo.value("details", w.Details, "waiting.details", 2); err != nil {
			return buf, err
		}
		wo.close()
		o.buf = wo.buf
	}
	if r.Output == nil && r.outputRead == nil {
		o.null("output")
	} else if r.Output == nil {
		if err := o.value("output", r.outputRead, "output", 1); err != nil {
			return buf, err
		}
	} else if err := o.value("output", r.Output, "output", 1); err != nil {
		return buf, err
	}
	o.nullStrKeep("error", r.Error, r.emptyNotNull&emptyError != 0)
	o.timeOrText("created_at", r.CreatedAt, r.createdText)
	o.timeOrText("updated_at", r.UpdatedAt, r.updatedText)
	o.nullStrKeep("actor_id", r.ActorID, r.emptyNotNull&emptyActor != 0)
	o.nullStrKeep("session_id", r.SessionID, r.emptyNotNull&emptySession != 0)
	o.nullStrKeep("parent_run_id", r.ParentRunID, r.emptyNotNull&emptyParent != 0)
	o.close()
	return o.buf, nil
}
