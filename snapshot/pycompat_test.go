package snapshot_test

// What this file checks: the snapshot stores answer as the Python
// JsonSnapshotStore / InMemorySnapshotStore (abstractruntime/storage/
// snapshots.py, spec §4.9) do given the same inputs, in the cases where
// they once differed. When python3 and the Python peer (a source tree
// holding abstractruntime/, named by PEER_SRC, by default /work/peer/src)
// are present, each test also asks Python and checks that the expectation
// below is what Python answers.

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/snapshot"
)

// pythonPeerSrc is the Python peer's source tree, as the other interop
// tests find it.
func pythonPeerSrc() string {
	if src := os.Getenv("PEER_SRC"); src != "" {
		return src
	}
	return "/work/peer/src"
}

// pythonAnswer runs script with the Python peer on the path and returns
// its stdout; ok is false (and the caller skips only the cross-check) when
// python3 or the peer is missing.
func pythonAnswer(t *testing.T, script string, args ...string) (string, bool) {
	t.Helper()
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Logf("python3 not found: Python cross-check skipped")
		return "", false
	}
	src := pythonPeerSrc()
	if _, err := os.Stat(filepath.Join(src, "abstractruntime")); err != nil {
		t.Logf("Python peer %s not found (set PEER_SRC): Python cross-check skipped", src)
		return "", false
	}
	cmd := exec.Command(py, append([]string{"-c", script}, args...)...)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+src)
	out, err := cmd.Output()
	if err != nil {
		msg := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			msg += ": " + string(ee.Stderr)
		}
		t.Fatalf("python: %s", msg)
	}
	return strings.TrimSpace(string(out)), true
}

func listIDs(t *testing.T, s snapshot.Store, p snapshot.ListParams) []string {
	t.Helper()
	got, err := s.List(t.Context(), p)
	if err != nil {
		t.Fatalf("List(%+v): %v", p, err)
	}
	ids := []string{}
	for _, sn := range got {
		ids = append(ids, sn.SnapshotID)
	}
	return ids
}

// JSONStore.List globbed filepath.Join(dir, "snapshot_*.json"), so the
// directory's own path was read as a pattern: in a data dir whose path
// holds '[' or '\' (e.g. ".../data[1]") List found no snapshot at all, or
// failed with "syntax error in pattern". Python's Path.glob takes the base
// directory literally and lists the snapshot.
func TestSnapshotListInDirWithGlobMetacharacters(t *testing.T) {
	for _, name := range []string{"data[1]", "x[y", `back\slash`} {
		t.Run(name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), name)
			s, err := snapshot.NewJSON(dir)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.Save(t.Context(), &durable.Snapshot{SnapshotID: "s1", RunID: "r1", Name: "n"}); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Load(t.Context(), "s1"); err != nil {
				t.Fatalf("Load: %v", err)
			}
			if py, ok := pythonAnswer(t, `
import sys
from abstractruntime.core import models
from abstractruntime.storage.snapshots import JsonSnapshotStore
print(",".join(s.snapshot_id for s in JsonSnapshotStore(sys.argv[1]).list()))
`, dir); ok && py != "s1" {
				t.Fatalf("Python lists %q, expected s1", py)
			}
			got, err := s.List(t.Context(), snapshot.ListParams{})
			if err != nil || len(got) != 1 || got[0].SnapshotID != "s1" {
				ids := []string{}
				for _, sn := range got {
					ids = append(ids, sn.SnapshotID)
				}
				t.Errorf("List in dir %q = %v, %v; want [s1] (Python lists it)", name, ids, err)
			}
		})
	}
}

// The query is "case-insensitive substring" compared, in Python, after
// str.lower(), which applies the Greek final-sigma rule: "ΟΔΟΣ".lower() is
// "οδος", so searching a snapshot named "ΟΔΟΣ" (or "Οδος") with the query
// "οδος", as a Greek user types it, matches. strings.ToLower maps every Σ
// to σ ("οδοσ"), so ours found nothing; the uppercase query "ΟΔΟΣ" over
// the name "οδος" missed the same way.
func TestSnapshotQueryGreekFinalSigma(t *testing.T) {
	if py, ok := pythonAnswer(t, `
from abstractruntime.core import models
from abstractruntime.storage.snapshots import InMemorySnapshotStore, Snapshot
st = InMemorySnapshotStore()
st.save(Snapshot(snapshot_id="upper", run_id="r", name="ΟΔΟΣ"))
st.save(Snapshot(snapshot_id="lower", run_id="r", name="οδος", created_at="2000-01-01T00:00:00+00:00"))
print(",".join(s.snapshot_id for s in st.list(query="οδος")) + "|" + ",".join(s.snapshot_id for s in st.list(query="ΟΔΟΣ")))
`); ok && py != "upper,lower|upper,lower" {
		t.Fatalf("Python answers %q, expected upper,lower|upper,lower", py)
	}
	for name, newStore := range stores() {
		t.Run(name, func(t *testing.T) {
			s := newStore(t)
			for _, sn := range []*durable.Snapshot{
				{SnapshotID: "lower", RunID: "r", Name: "οδος"},
				{SnapshotID: "upper", RunID: "r", Name: "ΟΔΟΣ"}, // saved second: newer
			} {
				if err := s.Save(t.Context(), sn); err != nil {
					t.Fatal(err)
				}
			}
			for _, q := range []string{"οδος", "ΟΔΟΣ"} {
				if got := listIDs(t, s, snapshot.ListParams{Query: q}); !slices.Equal(got, []string{"upper", "lower"}) {
					t.Errorf("List(query %q) = %v, want [upper lower] as Python's str.lower() gives", q, got)
				}
			}
		})
	}
}

// Python's list() builds each snapshot with data["snapshot_id"] and
// data["run_id"] inside its try block, so a file lacking either key is
// skipped like any unreadable file (spec §4.9: "unreadable files skipped by
// list"), and load() of it raises. Ours listed such a file as a snapshot
// with an empty id (or run id): an entry that Load and Delete could not
// address.
func TestSnapshotListSkipsFilesWithoutIDs(t *testing.T) {
	dir := t.TempDir()
	s, err := snapshot.NewJSON(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Save(t.Context(), &durable.Snapshot{SnapshotID: "good", RunID: "r"}); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"snapshot_noid.json":  `{"run_id": "r", "name": "no id", "created_at": "2026-01-05T00:00:00+00:00", "run_state": {}}`,
		"snapshot_norun.json": `{"snapshot_id": "norun", "name": "no run", "created_at": "2026-01-04T00:00:00+00:00", "run_state": {}}`,
	}
	for f, body := range files {
		if err := os.WriteFile(filepath.Join(dir, f), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if py, ok := pythonAnswer(t, `
import sys
from abstractruntime.core import models
from abstractruntime.storage.snapshots import JsonSnapshotStore
print(",".join(repr(s.snapshot_id) for s in JsonSnapshotStore(sys.argv[1]).list()))
`, dir); ok && py != "'good'" {
		t.Fatalf("Python lists %s, expected only 'good'", py)
	}
	if got := listIDs(t, s, snapshot.ListParams{}); !slices.Equal(got, []string{"good"}) {
		t.Errorf("List = %q; want [good]: Python skips the files without snapshot_id/run_id", got)
	}
}
