package hashchain_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// Spec §4.6: a prev_hash_mismatch error is {"index", "type",
// "expected_prev_hash", "actual_prev_hash"} (Python writes both keys, null
// included). ChainError tagged both fields omitempty, so the JSON report
// of a chain whose first record carries a prev_hash had no
// "expected_prev_hash" key, and one whose later record lost its prev_hash
// had no "actual_prev_hash" key.
func TestPrevHashMismatchReportKeepsNullKeys(t *testing.T) {
	t.Parallel()
	st := hashchain.Wrap(memory.New())
	recs := vectorRecords(t)
	if err := st.LedgerAppend(context.Background(), "run-1", recs); err != nil {
		t.Fatal(err)
	}
	// Tamper: the first record claims a predecessor, the second lost its link.
	recs[0].PrevHash = strings.Repeat("a", 64)
	recs[1].PrevHash = ""
	rep := hashchain.VerifyLedgerChain(recs)
	if rep.OK || len(rep.Errors) == 0 {
		t.Fatalf("tampered chain verified: %+v", rep)
	}
	b, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Errors []map[string]any `json:"errors"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	for _, e := range got.Errors {
		if e["type"] != "prev_hash_mismatch" {
			continue
		}
		for _, k := range []string{"expected_prev_hash", "actual_prev_hash"} {
			if _, ok := e[k]; !ok {
				t.Errorf("prev_hash_mismatch error %v has no %q key (spec: null when absent); report JSON: %s", e, k, b)
			}
		}
	}
}
