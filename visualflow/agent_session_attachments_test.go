package visualflow

import (
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/runtime"
)

// TestAgent_UseSessionAttachmentsReachesChildRuntimeControl: the agent's
// child vars carry "_runtime.control?: {include_session_attachments_index}"
// from the use_session_attachments memory setting (spec §5.6 child vars,
// §5.4.3), which is how the ReAct child's LLM calls learn whether session
// attachments are indexed (the runtime's default for tool-using agents is
// to include them). The reference test
// test_visualflow_agent_schedules_kg_query_before_starting_subworkflow
// asserts control.include_session_attachments_index is False for
// pinDefaults {"use_session_attachments": false}. As for llm_call, the
// direct input wins over the memory object's value.
func TestAgent_UseSessionAttachmentsReachesChildRuntimeControl(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		defaults string // extra agent pin defaults
		want     any    // child _runtime.control; nil: absent
	}{
		{"direct false", `"use_session_attachments":false`, map[string]any{"include_session_attachments_index": false}},
		{"memory object true", `"memory":{"use_session_attachments":"yes"}`, map[string]any{"include_session_attachments_index": true}},
		{"direct wins over memory", `"use_session_attachments":"off","memory":{"use_session_attachments":true}`,
			map[string]any{"include_session_attachments_index": false}},
		{"null in memory is unset", `"memory":{"use_session_attachments":null}`, nil},
		{"unset", ``, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			src := agentWiredFlow("", "response")
			if c.defaults != "" {
				src = strings.Replace(src, `"pinDefaults":{"prompt":"do it"}`, `"pinDefaults":{"prompt":"do it",`+c.defaults+`}`, 1)
			}
			var child map[string]any
			_, st := runFlows(t, []string{src}, []*runtime.Workflow{captureReact("react-x", &child, nil)}, nil, nil)
			if st.Status != durable.RunCompleted {
				t.Fatalf("status = %s (%s)", st.Status, st.Error)
			}
			crt, _ := child["_runtime"].(map[string]any)
			control, has := crt["control"]
			if c.want == nil {
				if has {
					t.Fatalf("child _runtime.control = %s, want absent", jsonText(t, control))
				}
				return
			}
			if got, w := jsonText(t, control), jsonText(t, c.want); got != w {
				t.Fatalf("child _runtime.control = %s, want %s (child _runtime: %s)", got, w, jsonText(t, crt))
			}
		})
	}
}
