package visualflow

import "testing"

// llm_call settings (spec §5.4.1) are read pins ▸ effectConfig, and a pin
// that is present decides even when null: the config is only the default
// for an absent pin. Some settings (prompt_cache_binding) have no config
// default at all.
func TestLLMCallPinPrecedence(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, defaults, cfg string
		path                []string // key path in the payload
		want                string   // JSON of the expected value; "" for absent
	}{
		{"null prompt pin is an empty prompt", `{"prompt":null}`, `{}`,
			[]string{"prompt"}, `""`},
		{"temperature pin wins over config", `{"prompt":"hi","temperature":0.2}`, `{"temperature":0.9}`,
			[]string{"params", "temperature"}, `0.2`},
		{"config temperature without a pin", `{"prompt":"hi"}`, `{"temperature":0.9}`,
			[]string{"params", "temperature"}, `0.9`},
		{"null seed pin gives no seed, not the config's", `{"prompt":"hi","seed":null}`, `{"seed":7}`,
			[]string{"params", "seed"}, ``},
		{"config seed without a pin", `{"prompt":"hi"}`, `{"seed":7}`,
			[]string{"params", "seed"}, `7`},
		{"null tools pin sends no tools, not the config's", `{"prompt":"hi","tools":null}`,
			`{"tools":[{"name":"search","description":"d","parameters":{}}]}`,
			[]string{"tools"}, `[]`},
		{"config prompt_cache_binding is not used", `{"prompt":"hi"}`, `{"prompt_cache_binding":"conv-1"}`,
			[]string{"params", "prompt_cache_binding"}, ``},
		{"null max_out_tokens pin falls back to config", `{"prompt":"hi","max_out_tokens":null}`, `{"max_output_tokens":64}`,
			[]string{"params", "max_output_tokens"}, `64`},
		{"unreadable max_out_tokens pin does not fall back to config", `{"prompt":"hi","max_out_tokens":"lots"}`, `{"max_output_tokens":64}`,
			[]string{"params", "max_output_tokens"}, ``},
		{"zero max_out_tokens is no limit", `{"prompt":"hi","max_out_tokens":0}`, `{}`,
			[]string{"params", "max_output_tokens"}, ``},
		{"empty response schema is no schema", `{"prompt":"hi","resp_schema":{}}`, `{}`,
			[]string{"response_schema"}, ``},
		{"wrapped empty response schema is no schema", `{"prompt":"hi","resp_schema":{"type":"json_schema","json_schema":{"schema":{}}}}`, `{}`,
			[]string{"response_schema"}, ``},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			p := runLLMCallPayload(t, c.defaults, c.cfg)
			var got any = p
			has := true
			for _, k := range c.path {
				m, _ := got.(map[string]any)
				got, has = m[k]
			}
			switch {
			case c.want == "" && has:
				t.Fatalf("payload %v = %s, want absent", c.path, jsonText(t, got))
			case c.want != "" && !has:
				t.Fatalf("payload %v absent, want %s", c.path, c.want)
			case c.want != "" && jsonText(t, got) != c.want:
				t.Fatalf("payload %v = %s, want %s", c.path, jsonText(t, got), c.want)
			}
		})
	}
}
