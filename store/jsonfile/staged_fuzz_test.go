package jsonfile

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
)

// FuzzStagedRecovery leaves a data dir as a terminal commit killed
// between its steps would: run_r1.json (running) and a ledger of nPrefix
// valid records, a staged file of arbitrary content whose name records the
// commit's append (arbitrary bytes, of which only the first `landed` made
// it to the ledger) in one of the three name forms (mode: run file content,
// file times, inode number), and optionally a save of the run by another
// process since. Properties: the open succeeds and leaves no staged file;
// the ledger's records from before the commit are still listed; the run
// is the staged state exactly when the whole append landed, the run was
// not saved since and the staged file holds a terminal r1; otherwise it
// is the run as it was (or as the other process saved it); a part of the
// append ending in a torn line is cut off when the run was not saved since,
// and nothing else of the ledger ever is.
func FuzzStagedRecovery(f *testing.F) {
	term := taggedRun("r1", "done")
	term.Status = durable.RunCompleted
	tb, err := durable.MarshalRun(term, pyjson.Pretty)
	if err != nil {
		f.Fatal(err)
	}
	rec := []byte(pyLedgerLine("end", "kend", "2026-01-01T10:00:00+00:00"))
	f.Add(uint8(0), uint8(1), tb, rec, uint16(len(rec)), false)
	f.Add(uint8(1), uint8(2), tb, rec, uint16(10), false)
	f.Add(uint8(2), uint8(0), tb, rec, uint16(0), false)
	f.Add(uint8(0), uint8(1), tb, rec, uint16(len(rec)), true)
	f.Add(uint8(1), uint8(1), tb, rec, uint16(len(rec)), true)
	f.Add(uint8(2), uint8(3), tb, append(rec, rec...), uint16(len(rec)), true)
	f.Add(uint8(0), uint8(1), tb[:20], rec, uint16(len(rec)), false)
	f.Add(uint8(0), uint8(1), bytes.Replace(tb, []byte("completed"), []byte("running"), 1), rec, uint16(len(rec)), false)
	f.Add(uint8(0), uint8(2), tb, []byte(""), uint16(0), false)
	f.Fuzz(func(t *testing.T, mode, nPrefix uint8, stagedData, appended []byte, landed uint16, savedSince bool) {
		if len(appended) > 4096 || len(stagedData) > 1<<16 {
			return
		}
		n := int(nPrefix % 4)
		k := int(landed) % (len(appended) + 1)
		dir := t.TempDir()
		var prefix bytes.Buffer
		for i := range n {
			prefix.WriteString(pyLedgerLine(fmt.Sprintf("p%d", i), fmt.Sprintf("pk%d", i), "2026-01-01T09:00:00+00:00"))
		}
		ledger := filepath.Join(dir, "ledger_r1.jsonl")
		runPath := filepath.Join(dir, "run_r1.json")
		orig, err := durable.MarshalRun(taggedRun("r1", "before"), pyjson.Pretty)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(runPath, orig, 0o644); err != nil {
			t.Fatal(err)
		}
		fi, err := os.Stat(runPath)
		if err != nil {
			t.Fatal(err)
		}
		var name string
		switch mode % 3 {
		case 0:
			name = stagedNameWithContent("r1", int64(prefix.Len()), appended, int64(len(orig)), appendSum(orig))
		case 1:
			name = stagedName("r1", int64(prefix.Len()), appended)
		case 2:
			name = stagedNameFor("r1", int64(prefix.Len()), appended, fileIDOf(fi).ino)
		}
		staged := filepath.Join(dir, name)
		if err := os.WriteFile(staged, stagedData, 0o644); err != nil {
			t.Fatal(err)
		}
		ledgerBefore := append(append([]byte(nil), prefix.Bytes()...), appended[:k]...)
		if len(ledgerBefore) > 0 || n > 0 {
			if err := os.WriteFile(ledger, ledgerBefore, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		current := orig
		if savedSince {
			// Another process saves the run since: a new file renamed over
			// it (a new inode), other bytes, a later time.
			current, err = durable.MarshalRun(taggedRun("r1", "saved by python since"), pyjson.Pretty)
			if err != nil {
				t.Fatal(err)
			}
			tmp := runPath + ".py.tmp"
			if err := os.WriteFile(tmp, current, 0o644); err != nil {
				t.Fatal(err)
			}
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(tmp, later, later); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, runPath); err != nil {
				t.Fatal(err)
			}
		}
		s := openInternal(t, dir)
		if left, _ := filepath.Glob(filepath.Join(dir, ".commit-*")); len(left) > 0 {
			t.Fatalf("staged files left after the open: %v", left)
		}
		got := listStepIDs(t, s, "r1")
		if len(got) < n {
			t.Fatalf("ledger lists %v, want the %d records from before the commit first", got, n)
		}
		for i := range n {
			if got[i] != fmt.Sprintf("p%d", i) {
				t.Fatalf("ledger lists %v, want p0..p%d first", got, n-1)
			}
		}
		whole := k == len(appended)
		wantRun := current
		if whole && !savedSince {
			if r, err := decodeRunFile("r1", stagedData); err == nil && r.Status.Terminal() {
				wantRun = stagedData
			}
		}
		r, err := s.RunGet(t.Context(), "r1")
		if err != nil {
			t.Fatalf("RunGet(r1) after recovery: %v", err)
		}
		gotRun, err := durable.MarshalRun(r, pyjson.Pretty)
		if err != nil {
			t.Fatal(err)
		}
		wr, err := durable.UnmarshalRun(wantRun)
		if err != nil {
			t.Fatal(err)
		}
		wantText, _ := durable.MarshalRun(wr, pyjson.Pretty)
		if !bytes.Equal(gotRun, wantText) {
			t.Fatalf("run after recovery (landed %d of %d, saved since %v, mode %d):\n%s\nwant\n%s", k, len(appended), savedSince, mode%3, gotRun, wantText)
		}
		now, _ := os.ReadFile(ledger)
		wantLedger := ledgerBefore
		if k > 0 && !whole && !savedSince && appended[k-1] != '\n' {
			wantLedger = prefix.Bytes()
		}
		if !bytes.Equal(now, wantLedger) {
			t.Fatalf("ledger after recovery (landed %d of %d, saved since %v):\n%q\nwant\n%q", k, len(appended), savedSince, now, wantLedger)
		}
	})
}
