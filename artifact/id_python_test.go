package artifact_test

import (
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// Python's compute_artifact_id namespaces the id with str(run_id).strip(),
// and only when that is not empty: the same content stored for the same
// run gets the same id in both runtimes, whatever whitespace surrounds
// the run id.
func TestComputeIDStripsRunIDAsPython(t *testing.T) {
	c := []byte("payload")
	if got, want := artifact.ComputeID(" run-1 ", c), artifact.ComputeID("run-1", c); got != want {
		t.Errorf("ComputeID(%q) = %s, want %s (Python strips the run id)", " run-1 ", got, want)
	}
	if got, want := artifact.ComputeID(" \t\n", c), artifact.ComputeID("", c); got != want {
		t.Errorf("ComputeID(blank run id) = %s, want the un-namespaced %s", got, want)
	}
}
