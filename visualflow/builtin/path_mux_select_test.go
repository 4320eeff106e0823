package builtin

import "testing"

// path_mux select coercion as builtins.py path_mux: a non-blank string is
// int(float(s.strip())) ("1_0" and "1e1" are 10, "١" is 1, "nan" and
// "infinity" fail and give 0), a float is truncated (-1.5 is -1, whose
// arm is missing, so the fallback wins), anything else int(x) or 0
// (spec §6.12). Outputs checked against python3.
func TestPathMuxSelectCoercion(t *testing.T) {
	cases := []struct {
		sel  any
		want string
	}{
		{"1_0", "ten"}, {"1e1", "ten"}, {"nan", "zero"}, {"infinity", "zero"}, {"-0.5", "zero"},
		{"١", "one"}, {"1.9", "one"}, {"+1", "one"}, {"  ", "zero"}, {"", "zero"},
		{1.9, "one"}, {-1.5, "fb"}, {true, "one"}, {map[string]any{}, "zero"},
	}
	for _, c := range cases {
		out, err := pathMuxNode(nil, map[string]any{"select": c.sel, "in0": "zero", "in1": "one", "in10": "ten", "fallback": "fb"})
		if err != nil {
			t.Fatalf("select %#v: %v", c.sel, err)
		}
		if got := out.(map[string]any)["out"]; got != c.want {
			t.Errorf("select %#v: out %v, want %v", c.sel, got, c.want)
		}
	}
}
