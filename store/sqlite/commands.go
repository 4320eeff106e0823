package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"time"
	"unicode/utf8"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// CommandAppend implements store.CommandStore: a command_id already
// stored returns its original seq (looked up before the INSERT OR IGNORE,
// so that duplicates leave no gaps in the seqs). run_id and type are
// required; an empty command_id gets a random uuid4 hex and a zero TS the
// current time (both written back to c, with the seq).
func (s *Store) CommandAppend(ctx context.Context, c *durable.CommandRecord) (durable.CommandAppendResult, error) {
	payloadJSON, err := store.PrepareCommand(c, time.Now())
	if err != nil {
		return durable.CommandAppendResult{}, fmt.Errorf("sqlite: command append: %w", err)
	}
	var res durable.CommandAppendResult
	err = s.write(ctx, func(ctx context.Context) error {
		// Look the id up first: an ignored INSERT would still consume an
		// AUTOINCREMENT value and leave a gap in the seqs.
		seq, err := s.w.cmdSeqByID.queryInt64(ctx, c.CommandID)
		switch {
		case err == nil:
			res.Seq = seq
			res.Duplicate = true
			return nil
		case !errors.Is(err, sql.ErrNoRows):
			return err
		}
		r, err := s.w.cmdInsert.execResult(ctx, c.CommandID, c.RunID, c.Type, string(payloadJSON), c.TSString(),
			nullString(c.ClientID))
		if err != nil {
			return err
		}
		n, err := r.RowsAffected()
		if err != nil {
			return err
		}
		if n == 0 {
			res.Duplicate = true
			res.Seq, err = s.w.cmdSeqByID.queryInt64(ctx, c.CommandID)
			return err
		}
		res.Accepted = true
		res.Seq, err = r.LastInsertId()
		return err
	})
	if err != nil {
		if s.commandSeqsExhausted(ctx) {
			return durable.CommandAppendResult{}, fmt.Errorf("sqlite: appending command %s: no seq left: seq %d, the largest an int64 holds, "+
				"is already taken: %w", c.CommandID, int64(math.MaxInt64), err)
		}
		return durable.CommandAppendResult{}, fmt.Errorf("sqlite: appending command %s: %w", c.CommandID, err)
	}
	if res.Accepted {
		c.Seq = res.Seq
	}
	return res, nil
}

// commandSeqsExhausted reports whether the commands' AUTOINCREMENT counter
// is at the largest int64: SQLite then refuses every insert with
// SQLITE_FULL, "database or disk is full", which alone would send an
// operator looking for disk space. Asked only once an append has failed.
func (s *Store) commandSeqsExhausted(ctx context.Context) bool {
	rd, err := s.read(ctx)
	if err != nil {
		return false
	}
	defer rd.release()
	rows, err := rd.db.QueryContext(ctx, `SELECT MAX(
		COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'commands'), 0),
		COALESCE((SELECT MAX(seq) FROM commands), 0))`)
	if err != nil {
		return false
	}
	defer rows.Close()
	var last int64
	return rows.Next() && rows.Scan(&last) == nil && last == math.MaxInt64
}

// CommandListAfter implements store.CommandStore; limit <= 0 means 1000.
func (s *Store) CommandListAfter(ctx context.Context, after int64, limit int) ([]*durable.CommandRecord, int64, error) {
	if limit <= 0 {
		limit = 1000
	}
	rd, err := s.read(ctx)
	if err != nil {
		return nil, after, fmt.Errorf("sqlite: listing commands: %w", err)
	}
	defer rd.release()
	rows, err := rd.cmdListAfter.QueryContext(ctx, after, limit)
	if err != nil {
		return nil, after, fmt.Errorf("sqlite: listing commands: %w", err)
	}
	defer rows.Close()
	var out []*durable.CommandRecord
	next := after
	for rows.Next() {
		var c durable.CommandRecord
		var payload sql.RawBytes
		var ts string
		var client sql.NullString
		if err := rows.Scan(&c.Seq, &c.CommandID, &c.RunID, &c.Type, &payload, &ts, &client); err != nil {
			return nil, after, fmt.Errorf("sqlite: listing commands: %w", err)
		}
		// As Python's reader: a payload that is not a JSON object (hand
		// edited) reads as {} rather than failing the whole page.
		if v, err := pyjson.Decode(payload); err == nil {
			c.Payload, _ = v.(map[string]any)
		}
		if c.Payload == nil {
			c.Payload = map[string]any{}
		}
		c.SetTSText(ts) // kept as written, as Python's reader does
		c.ClientID = client.String
		out = append(out, &c)
		next = c.Seq
	}
	if err := rows.Err(); err != nil {
		return nil, after, fmt.Errorf("sqlite: listing commands: %w", err)
	}
	return out, next, nil
}

// CommandLastSeq implements store.CommandStore.
func (s *Store) CommandLastSeq(ctx context.Context) (int64, error) {
	rd, err := s.read(ctx)
	if err != nil {
		return 0, fmt.Errorf("sqlite: last command seq: %w", err)
	}
	defer rd.release()
	var n int64
	if err := rd.cmdLastSeq.QueryRowContext(ctx).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlite: last command seq: %w", err)
	}
	return n, nil
}

// CommandDeleteByRun implements store.CommandStore.
func (s *Store) CommandDeleteByRun(ctx context.Context, runID string) (int, error) {
	runID = pyval.Strip(runID) // as Python's delete_by_run
	var n int64
	err := s.write(ctx, func(ctx context.Context) error {
		var err error
		n, err = s.w.cmdDeleteByRun.exec(ctx, runID)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("sqlite: deleting commands of %s: %w", runID, err)
	}
	return int(n), nil
}

// CursorLoad implements store.CommandStore: 0 when the consumer has none,
// or when its cursor is no integer (logged), as Python's load.
func (s *Store) CursorLoad(ctx context.Context, consumer string) (int64, error) {
	rd, err := s.read(ctx)
	if err != nil {
		return 0, fmt.Errorf("sqlite: loading cursor %s: %w", consumer, err)
	}
	defer rd.release()
	var v any
	err = rd.cursorLoad.QueryRowContext(ctx, consumer).Scan(&v)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("sqlite: loading cursor %s: %w", consumer, err)
	}
	n, err := cursorOf(v)
	if err != nil {
		// As Python's load, which returns 0 for any cursor int() cannot
		// read: failing here would fail every CursorLoad of the consumer,
		// so that its command loop could not start.
		s.log.Warn("reading a command cursor that is no integer as 0", "consumer", consumer, "err", err)
		return 0, nil
	}
	return n, nil
}

// cursorOf reads a command_cursors.cursor value as Python's int() reads
// it: NULL, an empty text or blob is 0 (int(row["cursor"] or 0)), a text
// or blob in int()'s spelling (" 12 ", "1_2") its integer. A REAL is
// truncated. A number past the int64 range (SQLite keeps 99999999999999999999
// as the REAL 1e20; a cursor set by hand to skip the backlog), infinities
// included, saturates at the int64 bounds: Python's unbounded int is past
// every seq, and so is math.MaxInt64. Python's int() refuses an infinity,
// and its load then returns 0, replaying every command; past the range
// saturates here, as everywhere in the stores. Anything else is an error.
func cursorOf(v any) (int64, error) {
	switch x := v.(type) {
	case nil:
		return 0, nil
	case int64:
		return x, nil
	case float64:
		if math.IsNaN(x) {
			return 0, errors.New("cursor NaN is not an integer")
		}
		return pyval.SaturatedInt(x), nil
	case string:
		return cursorOfText(x)
	case []byte:
		// int(b"...") reads ASCII only: no other digits or spaces.
		for _, c := range x {
			if c >= utf8.RuneSelf {
				return 0, fmt.Errorf("cursor %q is not an integer", x)
			}
		}
		return cursorOfText(string(x))
	}
	return 0, fmt.Errorf("cursor %v (%T) is not an integer", v, v)
}

// cursorOfText reads a cursor kept as text (or a blob) as int() does, an
// integer past the int64 range saturated; an empty one is 0.
func cursorOfText(s string) (int64, error) {
	if s == "" {
		return 0, nil
	}
	n, err := pyval.ToIndex(s)
	if err != nil {
		return 0, fmt.Errorf("cursor %q: %w", s, err)
	}
	return n, nil
}

// CursorSave implements store.CommandStore.
func (s *Store) CursorSave(ctx context.Context, consumer string, cursor int64) error {
	err := s.write(ctx, func(ctx context.Context) error {
		_, err := s.w.cursorSave.exec(ctx, consumer, cursor, durable.FormatTime(time.Now()))
		return err
	})
	if err != nil {
		return fmt.Errorf("sqlite: saving cursor %s: %w", consumer, err)
	}
	return nil
}
