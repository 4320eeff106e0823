package main

import (
	"encoding/json"
	"strings"
	"testing"
)

// needsLLMOuterFlow is an entry flow whose only LLM use is inside the
// subflow it starts (needsLLMInnerFlow): it has no llm_call or agent node
// itself.
const needsLLMOuterFlow = `{"id":"outer","name":"outer","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"sub","type":"subflow","data":{"subflowId":"inner","inputs":[{"id":"exec-in","type":"execution"}],"outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"}]}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"response","type":"string"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"sub","targetHandle":"exec-in"},
 {"source":"sub","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"sub","sourceHandle":"response","target":"end","targetHandle":"response"}]}`

const needsLLMInnerFlow = `{"id":"inner","name":"inner","entryNode":"s","nodes":[
 {"id":"s","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"llm","type":"llm_call","data":{
   "inputs":[{"id":"exec-in","type":"execution"},{"id":"prompt","type":"string"},{"id":"provider","type":"provider"},{"id":"model","type":"model"}],
   "outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"}],
   "pinDefaults":{"prompt":"hello","provider":"openai","model":"gpt-5-mini"}}},
 {"id":"e","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"response","type":"string"}]}}],
 "edges":[{"source":"s","sourceHandle":"exec-out","target":"llm","targetHandle":"exec-in"},
 {"source":"llm","sourceHandle":"exec-out","target":"e","targetHandle":"exec-in"},
 {"source":"llm","sourceHandle":"response","target":"e","targetHandle":"response"}]}`

// bundle run notes up front that no LLM provider is wired, so LLM steps
// fail. It must also do so when the LLM use sits in a subflow: the child
// run fails there, but a failed subflow child does not fail the parent
// (docs/visualflow.md Q18), so without the note the command would exit 0
// with nothing saying the flow's LLM steps could not run.
func TestBundleRunNotesLLMUsedInSubflow(t *testing.T) {
	t.Parallel()
	path := packFlows(t, t.TempDir(), "outer.json", map[string]string{
		"outer.json": needsLLMOuterFlow,
		"inner.json": needsLLMInnerFlow,
	})
	code, out, errOut := cliRun(t, strings.NewReader(""), path)
	if !strings.Contains(errOut, "no LLM provider is wired") {
		t.Errorf("bundle run of a flow whose subflow uses llm_call printed no LLM note (exit %d):\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}

// bundle inspect's flows[].needs_llm tells a host whether running the flow
// needs an LLM handler, so a flow that starts a subflow using one reports
// true, not only a flow with its own llm_call or agent node.
func TestBundleInspectNeedsLLMThroughSubflow(t *testing.T) {
	t.Parallel()
	path := packFlows(t, t.TempDir(), "outer.json", map[string]string{
		"outer.json": needsLLMOuterFlow,
		"inner.json": needsLLMInnerFlow,
	})
	code, out, errOut := call(t, "inspect", path)
	if code != 0 {
		t.Fatalf("inspect: exit %d\n%s%s", code, out, errOut)
	}
	var doc struct {
		Flows []struct {
			FlowID   string `json:"flow_id"`
			NeedsLLM bool   `json:"needs_llm"`
		} `json:"flows"`
	}
	if err := json.Unmarshal([]byte(out), &doc); err != nil {
		t.Fatalf("inspect output: %v\n%s", err, out)
	}
	got := map[string]bool{}
	for _, f := range doc.Flows {
		got[f.FlowID] = f.NeedsLLM
	}
	for _, id := range []string{"outer", "inner"} {
		if v, ok := got[id]; !ok || !v {
			t.Errorf("flow %s: needs_llm = %v (listed %v), want true", id, v, ok)
		}
	}
}
