package builtin

import (
	"crypto/rand"
	"encoding/hex"
	"time"

	"github.com/abstractframework/abstractgateway/internal/pyval"
)

// varName reads a variable-name input as the reference does: a string,
// or str() of a truthy non-string (a 0/False/null name is empty), stripped
// as Python's str.strip() (which also removes U+001C..U+001F).
func varName(v any) string {
	return pyval.Strip(pyval.StrOrEmpty(v))
}

// configName reads the name of a var_decl/bool_var configuration: only a
// string counts, stripped as Python's str.strip().
func configName(v any) string {
	s, _ := v.(string)
	return pyval.Strip(s)
}

// getVarNode reads the live run var at the dotted path in the name input;
// an empty name or a missing path yields null. Output: {"value": v}.
func getVarNode(env *Env, inputs map[string]any) (any, error) {
	return map[string]any{"value": lookupVar(env, varName(inputs["name"]))}, nil
}

// lookupVar resolves a dotted path in the live vars and returns a
// normalised deep copy (nil when missing).
func lookupVar(env *Env, name string) any {
	if name == "" || env == nil || env.Vars == nil {
		return nil
	}
	v, ok := pyval.GetDotted(env.Vars, name)
	if !ok {
		return nil
	}
	return pyval.Normalize(v)
}

// varDeclNode: typed variable reader configured by literalValue
// {name, type, default}. Output: {"name", "value"}.
func varDeclNode(env *Env, inputs map[string]any) (any, error) {
	cfg, _ := literalInputObject(env, inputs)
	name := configName(cfg["name"])
	typ := configName(cfg["type"])
	switch typ {
	case "boolean", "number", "string", "object", "array", "any":
	default:
		typ = "any"
	}
	// Without a name (or vars) there is nothing to read: the default
	// applies, for type any too.
	if name != "" && env != nil && env.Vars != nil {
		// A missing var reads as null, which type any accepts.
		if found := lookupVar(env, name); matchesType(typ, found) {
			return map[string]any{"name": name, "value": found}, nil
		}
	}
	value := zeroOf(typ)
	if matchesType(typ, cfg["default"]) {
		value = pyval.DeepCopy(cfg["default"])
	}
	return map[string]any{"name": name, "value": value}, nil
}

func literalInputObject(env *Env, inputs map[string]any) (map[string]any, bool) {
	v, _ := literalInput(env, inputs)
	m, ok := v.(map[string]any)
	if !ok {
		return map[string]any{}, false
	}
	return m, true
}

func matchesType(typ string, v any) bool {
	switch typ {
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "number":
		return pyval.IsRealNumber(v)
	case "string":
		_, ok := v.(string)
		return ok
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	}
	return true
}

func zeroOf(typ string) any {
	switch typ {
	case "boolean":
		return false
	case "number":
		return int64(0)
	case "string":
		return ""
	case "object":
		return map[string]any{}
	case "array":
		return []any{}
	}
	return nil
}

// boolVarNode: literalValue is a name or {name, default}; value is the var
// when it is a boolean, else the default (false unless a boolean).
func boolVarNode(env *Env, inputs map[string]any) (any, error) {
	lit, _ := literalInput(env, inputs)
	var name string
	def := false
	switch x := lit.(type) {
	case string:
		name = pyval.Strip(x)
	case map[string]any:
		name = configName(x["name"])
		if b, ok := x["default"].(bool); ok {
			def = b
		}
	}
	value := def
	if b, ok := lookupVar(env, name).(bool); ok {
		value = b
	}
	return map[string]any{"name": name, "value": value}, nil
}

// getContextNode reads vars.context: {context, task, messages}.
func getContextNode(env *Env, _ map[string]any) (any, error) {
	var ctx map[string]any
	if env != nil && env.Vars != nil {
		ctx, _ = pyval.Normalize(env.Vars["context"]).(map[string]any)
	}
	if ctx == nil {
		ctx = map[string]any{}
	}
	return map[string]any{
		"context":  ctx,
		"task":     pyval.StrOrEmpty(ctx["task"]),
		"messages": pyval.DeepCopy(listOf(ctx["messages"])),
	}, nil
}

// addMessageNode (pure form) builds {"message": {role, content, timestamp,
// metadata: {message_id}}}. The exec form that appends to vars.context is
// the compiler's.
func addMessageNode(env *Env, inputs map[string]any) (any, error) {
	role := "user"
	if r := inputs["role"]; r != nil {
		role = pyval.Str(r)
	}
	id, err := messageID(env)
	if err != nil {
		return nil, err
	}
	return map[string]any{"message": map[string]any{
		"role":      role,
		"content":   strOr(inputs["content"]),
		"timestamp": IsoFormat(env.now().UTC()),
		"metadata":  map[string]any{"message_id": id},
	}}, nil
}

// messageID returns "msg_" + 32 hex digits, from env.Rand when set (for
// deterministic tests) else from crypto/rand.
func messageID(env *Env) (string, error) {
	b := make([]byte, 16)
	if env != nil && env.Rand != nil {
		for i := range b {
			b[i] = byte(env.Rand.IntN(256))
		}
	} else if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "msg_" + hex.EncodeToString(b), nil
}

// IsoFormat renders t like Python's datetime.isoformat() for an aware
// datetime: microseconds only when non-zero, offset as +HH:MM.
func IsoFormat(t time.Time) string {
	layout := "2006-01-02T15:04:05"
	if t.Nanosecond()/1000 != 0 {
		layout += ".000000"
	}
	return t.Format(layout + "-07:00")
}
