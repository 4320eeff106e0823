package hashchain_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/store"
	"github.com/abstractframework/abstractgateway/store/hashchain"
	"github.com/abstractframework/abstractgateway/store/memory"
)

// chainChainSeeds are record lines as Python or Go write them.
var chainChainSeeds = []string{
	`{"run_id": "run-1", "step_id": "step-1", "node_id": "n1", "status": "completed", "effect": null, "result": {"a": 1, "f": 1.0, "s": "é"}, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": "2026-01-01T00:00:01+00:00", "actor_id": null, "session_id": null, "attempt": 1, "idempotency_key": null, "prev_hash": null, "record_hash": null, "signature": null}`,
	`{"run_id": "r", "step_id": "s", "node_id": "n", "status": "started", "effect": {"type": "wait_event", "payload": null, "result_key": "evt"}, "result": null, "error": null, "started_at": "2026-01-01T00:00:00+00:00", "ended_at": null, "actor_id": "", "session_id": null, "attempt": 1, "idempotency_key": "k1", "prev_hash": null, "record_hash": null, "signature": "sig"}`,
	`{"run_id": "r", "step_id": "s", "status": "failed", "result": [1e-7, 1E5, -0, 1.50, "<&>\u2028\u007f\ud83d\ude00"], "error": "", "extra": {"z": 1, "a": [true, false]}}`,
	`{"run_id": "r", "step_id": "s", "node_id": "n", "status": "completed", "started_at": "2026-01-01T00:00:00.123+00:00", "attempt": "2", "cancelled_by": "op"}`,
	`{"run_id": "r", "status": "waiting", "result": {"\u00e9": 1, "e": 2, "\ud800x": "lone"}, "prev_hash": ""}`,
}

var (
	chainPyMu      sync.Mutex
	chainPySamples []string // record lines as stored
)

// chainFuzzing reports whether the test binary is fuzzing (the python
// differential then runs only over the seeds and a corpus handed in by
// HASHCHAIN_PY_CORPUS, checked in one python3 run at the end).
func chainFuzzing() bool {
	fl := flag.Lookup("test.fuzz")
	return fl != nil && fl.Value.String() != ""
}

// chainReadGoCorpus reads the []byte and uint arguments of go fuzz corpus
// files in dir (as `go test -fuzz` writes them).
func chainReadGoCorpus(t testing.TB, dir string) [][]any {
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Logf("corpus %s: %v", dir, err)
		return nil
	}
	var out [][]any
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		var args []any
		for _, ln := range strings.Split(string(b), "\n")[1:] {
			switch {
			case strings.HasPrefix(ln, "[]byte(") && strings.HasSuffix(ln, ")"):
				s, err := strconv.Unquote(ln[len("[]byte(") : len(ln)-1])
				if err != nil {
					args = nil
					break
				}
				args = append(args, []byte(s))
			case strings.HasPrefix(ln, "uint(") && strings.HasSuffix(ln, ")"):
				n, err := strconv.ParseUint(ln[len("uint("):len(ln)-1], 0, 64)
				if err != nil {
					args = nil
					break
				}
				args = append(args, uint(n))
			}
		}
		if len(args) == 4 {
			if _, ok := args[0].([]byte); !ok {
				continue
			}
			out = append(out, args)
		}
	}
	return out
}

// chainCanonical is the text the chain hashes for r.
func chainCanonical(t *testing.T, r *durable.StepRecord) []byte {
	t.Helper()
	v, err := pyjson.Normalize(r.JSONValue(false))
	if err != nil {
		t.Fatalf("normalize: %v", err)
	}
	b, err := pyjson.Marshal(v, pyjson.Canonical)
	if err != nil {
		t.Fatalf("canonical: %v", err)
	}
	return b
}

// FuzzVerifyLedgerChainDamaged builds a three-record chain from a fuzzed
// record line (through the chaining store) and checks:
//   - the intact chain verifies, as listed and after a round trip through
//     the stored line form (what a JSONL / SQLite reader gets back);
//   - RecordHash is the SHA-256 of the canonical text, which decodes, has
//     no spaces outside strings and is stable under re-encoding;
//   - a byte changed in a stored line that still decodes fails
//     verification exactly when the record's hashed content, stored hash
//     or link changed, and then first at that record's index;
//   - two swapped records fail verification.
func FuzzVerifyLedgerChainDamaged(f *testing.F) {
	for i, s := range chainChainSeeds {
		f.Add([]byte(s), uint(i*7), uint('x'), uint(i))
	}
	if dir := os.Getenv("HASHCHAIN_PY_CORPUS"); dir != "" {
		for _, args := range chainReadGoCorpus(f, dir) {
			f.Add(args[0].([]byte), args[1].(uint), args[2].(uint), args[3].(uint))
		}
	}
	collect := !chainFuzzing()
	f.Cleanup(func() {
		chainPyMu.Lock()
		lines := chainPySamples
		chainPyMu.Unlock()
		if len(lines) > 0 && !f.Failed() {
			chainCheckCanonicalWithPython(f, lines)
		}
	})
	f.Fuzz(func(t *testing.T, line []byte, pos, b, swap uint) {
		base, err := durable.UnmarshalRecord(line)
		if err != nil {
			return
		}
		if _, err := hashchain.RecordHash(base); err != nil {
			return // e.g. NaN, refused by the encoder
		}
		ctx := context.Background()
		mem := memory.New()
		st := hashchain.Wrap(mem)
		const runID = "zz-run"
		var recs []*durable.StepRecord
		for i := range 3 {
			r := base.Clone()
			r.RunID = runID
			if i > 0 {
				r.StepID += "-" + strconv.Itoa(i)
			}
			recs = append(recs, r)
		}
		if err := st.LedgerAppend(ctx, runID, recs); err != nil {
			return // a record the store refuses
		}
		stored, err := mem.LedgerList(ctx, &store.LedgerListParams{RunID: runID})
		if err != nil || len(stored) != 3 {
			t.Fatalf("list: %d records, %v", len(stored), err)
		}
		rep := hashchain.VerifyLedgerChain(stored)
		if !rep.OK || rep.Count != 3 || rep.HeadHash == nil || *rep.HeadHash != stored[2].RecordHash {
			t.Fatalf("intact chain fails: %+v", rep)
		}
		for i, r := range stored {
			c := chainCanonical(t, r)
			sum := sha256.Sum256(c)
			if h, _ := hashchain.RecordHash(r); h != hex.EncodeToString(sum[:]) || h != r.RecordHash {
				t.Fatalf("record %d: RecordHash %s, sha256(canonical) %x, stored %s", i, h, sum, r.RecordHash)
			}
			v, err := pyjson.Decode(c)
			if err != nil {
				t.Fatalf("canonical %s does not decode: %v", c, err)
			}
			if c2, err := pyjson.Marshal(v, pyjson.Canonical); err != nil || !bytes.Equal(c, c2) {
				t.Fatalf("canonical not stable:\n%s\n%s (%v)", c, c2, err)
			}
		}
		// Round trip through the stored line form.
		lines := make([][]byte, 3)
		reread := make([]*durable.StepRecord, 3)
		for i, r := range stored {
			if lines[i], err = durable.MarshalRecord(r, pyjson.Line); err != nil {
				t.Fatalf("record %d of an intact chain does not encode: %v", i, err)
			}
			if reread[i], err = durable.UnmarshalRecord(lines[i]); err != nil {
				t.Fatalf("stored line %s does not decode: %v", lines[i], err)
			}
		}
		if rep := hashchain.VerifyLedgerChain(reread); !rep.OK {
			t.Fatalf("chain read back from its lines fails: %+v\n%s", rep, bytes.Join(lines, []byte("\n")))
		}
		if collect {
			chainPyMu.Lock()
			if len(chainPySamples) < 400 {
				chainPySamples = append(chainPySamples, string(lines[0]))
			}
			chainPyMu.Unlock()
		}
		// Swap two records.
		i, j := int(swap%3), int((swap/3)%2+1+swap%3)%3
		if i != j {
			sw := []*durable.StepRecord{reread[0], reread[1], reread[2]}
			sw[i], sw[j] = sw[j], sw[i]
			if rep := hashchain.VerifyLedgerChain(sw); rep.OK {
				t.Fatalf("records %d and %d swapped verify", i, j)
			}
		}
		// Change one byte of one stored line.
		k := int(pos % 3)
		if len(lines[k]) == 0 {
			return
		}
		p := int(pos/3) % len(lines[k])
		if lines[k][p] == byte(b) {
			return
		}
		mut := bytes.Clone(lines[k])
		mut[p] = byte(b)
		mr, err := durable.UnmarshalRecord(mut)
		if err != nil {
			return // an unreadable line is skipped by the readers, not verified
		}
		damaged := []*durable.StepRecord{reread[0], reread[1], reread[2]}
		damaged[k] = mr
		rep = hashchain.VerifyLedgerChain(damaged)
		orig := reread[k]
		same := mr.RecordHash == orig.RecordHash && mr.PrevHash == orig.PrevHash &&
			mr.PrevHashEmptyNotNull() == orig.PrevHashEmptyNotNull()
		if same {
			if _, err := hashchain.RecordHash(mr); err != nil {
				same = false
			} else {
				same = bytes.Equal(chainCanonical(t, mr), chainCanonical(t, orig))
			}
		}
		if same {
			if !rep.OK {
				t.Fatalf("a change outside the hashed content (byte %d of record %d to %q) fails verification: %+v\n%s\n%s", p, k, byte(b), rep, lines[k], mut)
			}
			return
		}
		if rep.OK || rep.FirstBadIndex == nil || *rep.FirstBadIndex != k {
			t.Fatalf("byte %d of record %d changed to %q: report %+v; want the chain to fail first at %d\n%s\n%s", p, k, byte(b), rep, k, lines[k], mut)
		}
	})
}

// chainCheckCanonicalWithPython hands the stored lines to one python3 run,
// which computes the hashed text as verify_ledger_chain does (the record
// without record_hash and signature, json.dumps(sort_keys=True,
// separators=(",", ":"), ensure_ascii=False), and ensure_ascii=True for
// the idempotency-key style), and compares them with ours.
func chainCheckCanonicalWithPython(t testing.TB, lines []string) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Log("python3 not found: differential skipped")
		return
	}
	const script = `
import base64, json, sys
out = []
for line in json.loads(sys.stdin.read()):
    d = json.loads(line)
    d.pop("record_hash", None); d.pop("signature", None)
    r = {}
    for name, asc in (("canonical", False), ("ascii", True)):
        try:
            r[name] = base64.b64encode(json.dumps(d, sort_keys=True, separators=(",", ":"), ensure_ascii=asc).encode("utf-8")).decode()
        except Exception as e:
            r[name] = None
    out.append(r)
print(json.dumps(out))
`
	in, _ := json.Marshal(lines)
	cmd := exec.Command(py, "-c", script)
	cmd.Stdin = bytes.NewReader(in)
	outb, err := cmd.Output()
	if err != nil {
		t.Fatalf("python3: %v", err)
	}
	var got []map[string]*string
	if err := json.Unmarshal(outb, &got); err != nil || len(got) != len(lines) {
		t.Fatalf("python3 output: %v (%d of %d)", err, len(got), len(lines))
	}
	checked := 0
	for i, line := range lines {
		r, err := durable.UnmarshalRecord([]byte(line))
		if err != nil {
			t.Fatalf("sample %d does not decode: %v", i, err)
		}
		v, err := pyjson.Normalize(r.JSONValue(false))
		if err != nil {
			t.Fatal(err)
		}
		for name, st := range map[string]pyjson.Style{"canonical": pyjson.Canonical, "ascii": pyjson.CanonicalASCII} {
			want := got[i][name]
			if want == nil {
				continue // Python cannot write it (a lone surrogate as UTF-8)
			}
			w, _ := base64.StdEncoding.DecodeString(*want)
			ours, err := pyjson.Marshal(v, st)
			if err != nil || !bytes.Equal(ours, w) {
				t.Errorf("%s text of %s:\n go %s (%v)\n py %s", name, line, ours, err, w)
			}
			checked++
		}
	}
	t.Logf("python3 differential: %d texts of %d stored records agree", checked, len(lines))
}
