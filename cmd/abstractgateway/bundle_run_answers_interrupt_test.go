package main

import (
	"context"
	"strings"
	"testing"
	"time"
)

// twoAsksFlow asks two questions in a row and ends with both answers.
const twoAsksFlow = `{"id":"twoasks","name":"twoasks","entryNode":"start","nodes":[
 {"id":"start","type":"on_flow_start","data":{"outputs":[{"id":"exec-out","type":"execution"}]}},
 {"id":"ask1","type":"ask_user","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"prompt","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"}],"pinDefaults":{"prompt":"First?"}}},
 {"id":"ask2","type":"ask_user","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"prompt","type":"string"}],"outputs":[{"id":"exec-out","type":"execution"},{"id":"response","type":"string"}],"pinDefaults":{"prompt":"Second?"}}},
 {"id":"end","type":"on_flow_end","data":{"inputs":[{"id":"exec-in","type":"execution"},{"id":"a","type":"string"},{"id":"b","type":"string"}]}}],
 "edges":[{"source":"start","sourceHandle":"exec-out","target":"ask1","targetHandle":"exec-in"},
 {"source":"ask1","sourceHandle":"exec-out","target":"ask2","targetHandle":"exec-in"},
 {"source":"ask2","sourceHandle":"exec-out","target":"end","targetHandle":"exec-in"},
 {"source":"ask1","sourceHandle":"response","target":"end","targetHandle":"a"},
 {"source":"ask2","sourceHandle":"response","target":"end","targetHandle":"b"}]}`

// TestBundleRunAnswersQuestionsWithTheAnswersInOrder: each --answer
// answers one question, in order ("--answer values in order"). Would
// break if an answer were not used up, so that the first answered every
// question.
func TestBundleRunAnswersQuestionsWithTheAnswersInOrder(t *testing.T) {
	t.Parallel()
	path := packFlows(t, t.TempDir(), "twoasks.json", map[string]string{"twoasks.json": twoAsksFlow})
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--answer", "one", "--answer", "two")
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, out, errOut)
	}
	output, _ := cliResult(t, out)["output"].(map[string]any)
	if output["a"] != "one" || output["b"] != "two" {
		t.Fatalf("--answer one --answer two: output %v, want a=one b=two\n%s", output, errOut)
	}
}

// TestBundleRunInterruptDuringALongWaitUntilExitsAtOnce: Ctrl-C during
// a wait_until of a minute ends the command at once, not when the wait
// is over. Would break if the sleep ignored the interrupt.
func TestBundleRunInterruptDuringALongWaitUntilExitsAtOnce(t *testing.T) {
	t.Parallel()
	path := packMinuteNap(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout, stderr syncBuf
	done := make(chan int, 1)
	go func() {
		done <- bundleRunWith(ctx, []string{path, "--data-dir", t.TempDir()}, strings.NewReader(""), &stdout, &stderr)
	}()
	waitFor(t, func() bool { return strings.Contains(stderr.String(), "waiting until") })
	cancel()
	select {
	case code := <-done:
		if code != 1 || !strings.Contains(stderr.String(), "bundle run: interrupted") {
			t.Fatalf("interrupted: exit %d, want 1 with \"interrupted\"\n%s", code, stderr.String())
		}
	case <-time.After(5 * time.Second):
		t.Errorf("interrupted during a one-minute wait_until: still running 5s later\n%s", stderr.String())
		<-done
	}
}

// askLateFailFlow is askLateFlow whose root fails at its end (an output
// of +Infinity is not JSON), after its ping started the listener's branch
// that asks "Name?".
var askLateFailFlow = strings.NewReplacer(
	`{"id":"exec-in","type":"execution"},{"id":"delivered","type":"number"}]}}`,
	`{"id":"exec-in","type":"execution"},{"id":"delivered","type":"number"},{"id":"x","type":"number"}]}},
 {"id":"inf","type":"add","data":{"inputs":[{"id":"a","type":"number"},{"id":"b","type":"number"}],"outputs":[{"id":"result","type":"number"}],"pinDefaults":{"a":Infinity,"b":0}}}`,
	`{"source":"emit","sourceHandle":"delivered","target":"end","targetHandle":"delivered"},`,
	`{"source":"emit","sourceHandle":"delivered","target":"end","targetHandle":"delivered"},
 {"source":"inf","sourceHandle":"result","target":"end","targetHandle":"x"},`,
).Replace(askLateFlow)

// TestBundleRunFailedRunNamesAListenersUnansweredQuestion: a run that
// fails while its listener asks a question nobody answered exits 1 (the
// outcome) but still prints the command that continues it, naming the
// listener's question, which continuing the run can answer. Would break
// if the continue command were printed only for a completed run.
func TestBundleRunFailedRunNamesAListenersUnansweredQuestion(t *testing.T) {
	t.Parallel()
	path := packFlows(t, t.TempDir(), "asklate.json", map[string]string{"asklate.json": askLateFailFlow})
	data := t.TempDir()
	code, out, errOut := cliRun(t, strings.NewReader(""), path, "--data-dir", data, "--run-id", "R1")
	if res := cliResult(t, out); code != 1 || res["status"] != "failed" {
		t.Fatalf("root fails at its end: exit %d, status %v; want 1, failed\n%s%s", code, res["status"], out, errOut)
	}
	want := `its run R1-listener-0 waits for an answer to "Name?"`
	if !strings.Contains(errOut, want) || !strings.Contains(errOut, "--run-id R1") {
		t.Fatalf("failed run, listener's question unanswered: want the continue command and %q\n%s", want, errOut)
	}
}
