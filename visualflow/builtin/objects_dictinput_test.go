package builtin

import (
	"encoding/json"
	"testing"
)

// merge / set read their object inputs as the reference's dict(x) does.
// Each want is json.dumps(dict(x)) in CPython 3.11 (keys that are not
// strings come out as json.dumps writes them; keys equal in Python, such as
// 1, True and 1.0, are one key named after the first); each wantErr is the
// error CPython raises, in the node's message style.
func TestMergeSetDictInputLikePython(t *testing.T) {
	runNodeCases(t, []nodeCase{
		{name: "empty list", typ: "merge", in: obj{"a": arr{}}, want: obj{}},
		{name: "empty string", typ: "merge", in: obj{"a": "", "b": ""}, want: obj{}},
		{name: "list pair", typ: "merge", in: obj{"a": arr{arr{"k", "v"}}, "b": obj{"x": int64(1)}}, want: obj{"k": "v", "x": int64(1)}},
		{name: "b pairs win", typ: "merge", in: obj{"a": obj{"k": int64(1)}, "b": arr{arr{"k", int64(2)}}}, want: obj{"k": int64(2)}},
		{name: "two-char string", typ: "merge", in: obj{"a": arr{"ab"}}, want: obj{"a": "b"}},
		{name: "two-char string by code point", typ: "merge", in: obj{"a": arr{"é😀"}}, want: obj{"é": "😀"}},
		{name: "two-key object iterates keys", typ: "merge", in: obj{"a": arr{obj{"a": int64(1), "b": int64(2)}}}, want: obj{"a": "b"}},
		{name: "later pair wins", typ: "merge", in: obj{"a": arr{arr{"a", int64(1)}, arr{"a", int64(2)}}}, want: obj{"a": int64(2)}},
		{name: "equal number keys are one key", typ: "merge", in: obj{"a": arr{arr{int64(1), "x"}, arr{true, "y"}, arr{1.0, "z"}}}, want: obj{"1": "z"}},
		{name: "non-string keys as json.dumps", typ: "merge",
			in:   obj{"a": arr{arr{nil, int64(1)}, arr{false, int64(2)}, arr{1.5, int64(3)}, arr{int64(0), int64(4)}, arr{json.Number("123456789012345678901234"), int64(5)}}},
			want: obj{"null": int64(1), "false": int64(4), "1.5": int64(3), "123456789012345678901234": int64(5)}},
		{name: "value kept as is", typ: "merge", in: obj{"a": arr{arr{"k", arr{int64(1), int64(2)}}}}, want: obj{"k": arr{int64(1), int64(2)}}},
		{name: "set on empty string", typ: "set", in: obj{"object": "", "key": "a.b", "value": int64(1)}, want: obj{"a": obj{"b": int64(1)}}},
		{name: "set on pairs", typ: "set", in: obj{"object": arr{arr{"x", int64(0)}}, "key": "k", "value": int64(1)}, want: obj{"x": int64(0), "k": int64(1)}},

		{name: "string of single chars", typ: "merge", in: obj{"a": "ab"}, wantErr: "merge: input 'a' must be an object or a list of key/value pairs: dictionary update sequence element #0 has length 1; 2 is required"},
		{name: "three-element pair", typ: "merge", in: obj{"b": arr{arr{"k", "v", "w"}}}, wantErr: "merge: input 'b' must be an object or a list of key/value pairs: dictionary update sequence element #0 has length 3; 2 is required"},
		{name: "second element too long", typ: "merge", in: obj{"a": arr{arr{"a", int64(1)}, "abc"}}, wantErr: "element #1 has length 3; 2 is required"},
		{name: "empty pair", typ: "merge", in: obj{"a": arr{arr{}}}, wantErr: "element #0 has length 0; 2 is required"},
		{name: "one-key object", typ: "merge", in: obj{"a": arr{obj{"a": int64(1)}}}, wantErr: "element #0 has length 1; 2 is required"},
		{name: "number element", typ: "merge", in: obj{"a": arr{int64(5)}}, wantErr: "cannot convert dictionary update sequence element #0 to a sequence"},
		{name: "null element", typ: "set", in: obj{"object": arr{nil}, "key": "k"}, wantErr: "set: input 'object' must be an object or a list of key/value pairs: cannot convert dictionary update sequence element #0 to a sequence"},
		{name: "list key", typ: "merge", in: obj{"a": arr{arr{arr{int64(1)}, int64(2)}}}, wantErr: "unhashable type: 'list'"},
		{name: "object key", typ: "merge", in: obj{"a": arr{arr{obj{"a": int64(1)}, int64(2)}}}, wantErr: "unhashable type: 'dict'"},
		{name: "int", typ: "merge", in: obj{"a": int64(5)}, wantErr: "merge: input 'a' must be an object, got int"},
		{name: "null", typ: "merge", in: obj{"b": nil}, wantErr: "merge: input 'b' must be an object, got NoneType"},
		{name: "bool", typ: "set", in: obj{"object": true, "key": "k"}, wantErr: "set: input 'object' must be an object, got bool"},
		{name: "float", typ: "set", in: obj{"object": 1.5, "key": "k"}, wantErr: "set: input 'object' must be an object, got float"},
	})
}
