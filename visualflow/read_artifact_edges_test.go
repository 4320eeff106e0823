package visualflow

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/artifact"
)

// Binary bytes of exactly the projection limit are base64-encoded whole
// (spec §6.10: truncated only when longer than 131072 bytes): a >= slip
// would flag them truncated and add a #TRUNCATION warning for nothing.
func TestReadArtifactBinaryAtLimitNotTruncated(t *testing.T) {
	data := bytes.Repeat([]byte{0xff}, artifactBinaryMaxBytes)
	out := readTaggedArtifact(t, data, "application/octet-stream", nil)
	if out["truncated"] != false || out["is_binary"] != true {
		t.Fatalf("truncated = %v, is_binary = %v; want an untruncated binary projection", out["truncated"], out["is_binary"])
	}
	w, _ := out["warnings"].([]any)
	for _, x := range w {
		if strings.Contains(x.(string), "#TRUNCATION") {
			t.Fatalf("warnings = %v, want no #TRUNCATION warning", w)
		}
	}
}

// An id the store rejects as invalid reads as "artifact not found" naming
// the node and the id (spec §6.10), the same error as an unknown id, not a
// store-internal loading failure.
func TestReadArtifactInvalidIDIsNotFound(t *testing.T) {
	arts := artifact.NewMemory()
	_, err := readArtifact(context.Background(), arts, map[string]any{"artifact": "../x"})
	if err == nil || !strings.Contains(err.Error(), "read_artifact: artifact not found: ../x") {
		t.Fatalf("read_artifact of id ../x: error %v, want \"read_artifact: artifact not found: ../x\"", err)
	}
}
