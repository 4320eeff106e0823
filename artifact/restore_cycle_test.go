package artifact_test

import (
	"context"
	"os"
	"os/exec"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/artifact"
)

// TestRestoreTerminatesOnArtifactCycle checks the promise of
// artifact.Restore (offload.go): it "returns v with the refs … replaced by
// their content: JSON artifacts decoded (and the refs inside them
// restored …)", and a ref it cannot resolve is left as it is ("a dangling
// ref must not block its reader"); Offload refuses cycles (spec §4.7
// "cycles are errors").
//
// Restore recurses into every JSON artifact it expands with no memory of
// the artifacts it is already inside. An artifact whose JSON content is a
// ref to itself (or two that refer to each other; ids may be chosen by the
// caller, and a .meta file may name any blob) makes it recurse until the
// goroutine's stack is exhausted: "fatal error: stack overflow", which no
// recover catches, so the whole process (a runtime replaying a ledger, a
// parent resumed by its child, a history export) dies. Run in a child
// process so that the crash fails this test only; the child's stack is
// capped so that the overflow comes in milliseconds.
func TestRestoreTerminatesOnArtifactCycle(t *testing.T) {
	if os.Getenv("ARTIFACT_RESTORE_CYCLE_CHILD") == "1" {
		debug.SetMaxStack(32 << 20)
		time.AfterFunc(4*time.Second, func() { os.Exit(3) }) // an endless loop instead of a crash
		ctx := context.Background()
		st := artifact.NewMemory()
		for id, content := range map[string]string{
			"self": `{"$artifact":"self"}`,
			"ping": `{"next":{"$artifact":"pong"}}`,
			"pong": `{"next":{"$artifact":"ping"}}`,
		} {
			if _, err := st.Put(ctx, artifact.PutParams{Content: []byte(content), ContentType: "application/json",
				RunID: "r", ArtifactID: id, Tags: map[string]string{"source": artifact.SourceRunOutput}}); err != nil {
				t.Fatal(err)
			}
		}
		mine := func(m *artifact.Metadata) bool { return m.Tags["source"] == artifact.SourceRunOutput }
		for _, id := range []string{"self", "ping"} {
			_, _ = artifact.Restore(ctx, st, map[string]any{"out": artifact.Ref(id)}, mine) // an error is fine
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRestoreTerminatesOnArtifactCycle$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ARTIFACT_RESTORE_CYCLE_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		first, _, _ := strings.Cut(string(out), "\n")
		t.Fatalf("Restore over artifacts that refer to themselves did not return (%v): %s", err, first)
	}
}
