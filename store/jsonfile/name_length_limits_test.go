package jsonfile

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// TestRunFileOfTheLongestNameIsRead: a run file whose name is exactly
// maxNameLen bytes long (run_<246-byte id>.json), which another writer
// (Python takes any id its file system takes) can make, is read and
// deleted by id like any other: only a longer name, which no file can
// have, is answered "absent" without looking.
func TestRunFileOfTheLongestNameIsRead(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	dir := t.TempDir()
	id := strings.Repeat("r", maxNameLen-len("run_.json"))
	s := openInternal(t, dir)
	b, err := durable.MarshalRun(taggedRun(id, "longest"), pyjson.Pretty)
	if err != nil {
		t.Fatal(err)
	}
	writeRawFile(t, s.runPath(id), string(b))
	got, err := s.RunGet(ctx, id)
	if err != nil || got.Vars["tag"] != "longest" {
		t.Fatalf("RunGet of the run whose file name is %d bytes = %v, %v; want the run", maxNameLen, got, err)
	}
	if existed, err := s.RunDelete(ctx, id); err != nil || !existed {
		t.Fatalf("RunDelete = %v, %v; want true, nil", existed, err)
	}
	if _, err := os.Stat(s.runPath(id)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the run file is still there after RunDelete: %v", err)
	}
}

// TestCreateTakesTheLongestIdItsTempNameAllows: a create is refused only
// when the temp file it writes first (run_<id>.json.<32 hex>.tmp) would
// have a name past maxNameLen; an id one byte shorter, whose temp name is
// exactly maxNameLen bytes, is created and read back.
func TestCreateTakesTheLongestIdItsTempNameAllows(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	s := openInternal(t, t.TempDir())
	longest := strings.Repeat("r", maxNameLen-len("run_.json.")-32-len(".tmp"))
	if err := s.RunCommit(ctx, &store.CommitParams{Run: taggedRun(longest, "fits"), Create: true}); err != nil {
		t.Fatalf("create of a %d-byte id: %v", len(longest), err)
	}
	if got, err := s.RunGet(ctx, longest); err != nil || got.Vars["tag"] != "fits" {
		t.Fatalf("RunGet = %v, %v; want the run", got, err)
	}
	tooLong := longest + "r"
	if err := s.RunCommit(ctx, &store.CommitParams{Run: taggedRun(tooLong, "no"), Create: true}); !errors.Is(err, store.ErrInvalidID) {
		t.Errorf("create of a %d-byte id: %v; want store.ErrInvalidID", len(tooLong), err)
	}
}

// TestRunIdPastTheLongestNameIsAbsent: a run whose file name would pass
// maxNameLen cannot exist, so RunGet answers store.ErrNotFound (a 404 to a
// client) and RunDelete false, without asking the file system, which
// would fail with ENAMETOOLONG: an error, not "absent".
func TestRunIdPastTheLongestNameIsAbsent(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	id := strings.Repeat("r", maxNameLen-len("run_.json")+1)
	s := openInternal(t, t.TempDir())
	if got, err := s.RunGet(ctx, id); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("RunGet of an id one byte past the longest = %v, %v; want ErrNotFound", got, err)
	}
	if existed, err := s.RunDelete(ctx, id); err != nil || existed {
		t.Errorf("RunDelete of an id one byte past the longest = %v, %v; want false, nil", existed, err)
	}
}
