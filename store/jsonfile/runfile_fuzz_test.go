package jsonfile

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
)

// FuzzRunFile writes arbitrary bytes as run_r1.json beside a valid
// run_good.json and opens the store. Properties: the open succeeds and
// the good run is read, listed and indexed whatever r1's file holds;
// RunGet(r1) either returns run r1 or fails with an error that names the
// file and is not ErrNotFound; the listings hold r1 exactly when RunGet
// reads it; a read run commits back unchanged (its re-encoding decodes to
// the same bytes again, in this process and after a reopen); an unreadable
// file is never overwritten by a create of r1.
func FuzzRunFile(f *testing.F) {
	good, err := durable.MarshalRun(taggedRun("r1", "seed"), pyjson.Pretty)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add(good[:len(good)/2])
	f.Add(bytes.Replace(good, []byte(`"r1"`), []byte(`"r2"`), 1))
	f.Add([]byte(`{"run_id": "r1", "workflow_id": "wf", "status": "waiting", "waiting": {"reason": "until", "until": "2026-01-01T00:00:00+00:00"}}`))
	f.Add([]byte(`{"run_id": "r1"}`))
	f.Add([]byte(`{"run_id": "r1", "status": "completed", "vars": {"x": NaN}, "output": {"a": [1, 2.5e300]}}`))
	f.Add([]byte(""))
	f.Add([]byte("[]"))
	if paths, _ := filepath.Glob("testdata/python_datadir/run_*.json"); len(paths) > 0 {
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			id := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(p), "run_"), ".json")
			f.Add(bytes.ReplaceAll(b, []byte(`"`+id+`"`), []byte(`"r1"`)))
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		path := filepath.Join(dir, "run_r1.json")
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		gb, err := durable.MarshalRun(taggedRun("good", "kept"), pyjson.Pretty)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "run_good.json"), gb, 0o644); err != nil {
			t.Fatal(err)
		}
		s := openInternal(t, dir)
		ctx := t.Context()
		checkGood := func(s *Store) {
			t.Helper()
			g, err := s.RunGet(ctx, "good")
			if err != nil || g.Vars["tag"] != "kept" {
				t.Fatalf("RunGet(good) = %v, %v; the valid run beside a damaged one is lost", g, err)
			}
		}
		checkGood(s)
		r, getErr := s.RunGet(ctx, "r1")
		if getErr != nil {
			if errors.Is(getErr, store.ErrNotFound) || !strings.Contains(getErr.Error(), "run_r1.json") {
				t.Fatalf("RunGet of an unreadable run file = %v; want an error naming run_r1.json, not not-found", getErr)
			}
		} else if r.RunID != "r1" {
			t.Fatalf("RunGet(r1) returned run %q", r.RunID)
		}
		runs, err := s.RunList(ctx, &store.RunListParams{Limit: 1000})
		if err != nil {
			t.Fatalf("RunList: %v", err)
		}
		var listed []string
		for _, x := range runs {
			listed = append(listed, x.RunID)
		}
		rows, err := s.RunIndex(ctx, &store.RunIndexParams{Limit: 1000})
		if err != nil {
			t.Fatalf("RunIndex: %v", err)
		}
		var indexed []string
		for _, x := range rows {
			indexed = append(indexed, x.RunID)
		}
		slices.Sort(listed)
		slices.Sort(indexed)
		want := []string{"good"}
		if getErr == nil {
			want = []string{"good", "r1"}
		}
		if !slices.Equal(listed, want) || !slices.Equal(indexed, want) {
			t.Fatalf("RunList lists %v and RunIndex %v; want %v (RunGet(r1) err %v)", listed, indexed, want, getErr)
		}
		if getErr != nil {
			// A create must not overwrite the file it could not read.
			err := s.RunCommit(ctx, &store.CommitParams{Run: taggedRun("r1", "new"), Create: true})
			if !errors.Is(err, store.ErrAlreadyExists) {
				t.Fatalf("create over an unreadable run file = %v; want ErrAlreadyExists", err)
			}
			if now, _ := os.ReadFile(path); !bytes.Equal(now, data) {
				t.Fatalf("a failed create changed the unreadable file")
			}
			return
		}
		b1, err := durable.MarshalRun(r, pyjson.Pretty)
		if err != nil {
			t.Fatalf("a run read does not encode: %v", err)
		}
		// The canonical form decodes to itself.
		r1, err := durable.UnmarshalRun(b1)
		if err != nil {
			t.Fatalf("re-encoded run does not decode: %v\n%s", err, b1)
		}
		if b1b, _ := durable.MarshalRun(r1, pyjson.Pretty); !bytes.Equal(b1, b1b) {
			t.Fatalf("re-encoding is not stable:\n%s\n---\n%s", b1, b1b)
		}
		if err := s.RunCommit(ctx, &store.CommitParams{Run: r}); err != nil {
			t.Fatalf("commit of the run as read: %v", err)
		}
		r2, err := s.RunGet(ctx, "r1")
		if err != nil {
			t.Fatalf("RunGet after commit: %v", err)
		}
		if b2, _ := durable.MarshalRun(r2, pyjson.Pretty); !bytes.Equal(b1, b2) {
			t.Fatalf("the run read back after its commit differs:\n%s\n---\n%s", b1, b2)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		s2 := openInternal(t, dir)
		checkGood(s2)
		r3, err := s2.RunGet(ctx, "r1")
		if err != nil {
			t.Fatalf("RunGet after reopen: %v", err)
		}
		if b3, _ := durable.MarshalRun(r3, pyjson.Pretty); !bytes.Equal(b1, b3) {
			t.Fatalf("the run read after a reopen differs:\n%s\n---\n%s", b1, b3)
		}
	})
}
