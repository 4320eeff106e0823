package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/abstractframework/abstractgateway/durable"
	"github.com/abstractframework/abstractgateway/internal/pyjson"
	"github.com/abstractframework/abstractgateway/internal/pyval"
	"github.com/abstractframework/abstractgateway/store"
)

// CommandAppend implements store.CommandStore: a command_id already
// stored returns its original seq. Appends lock the one row of
// command_seq (the last seq handed out) for their transaction, so seqs
// are gapless (a PostgreSQL sequence would skip the values of duplicates
// and of rolled back inserts), never reused after a delete, and commit in
// seq order (a consumer reading after its cursor never misses a command
// committed late). run_id and type are
// required; an empty command_id gets a random uuid4 hex and a zero TS the
// current time (both written back to c, with the seq).
func (s *Store) CommandAppend(ctx context.Context, c *durable.CommandRecord) (durable.CommandAppendResult, error) {
	payloadJSON, err := store.PrepareCommand(c, time.Now())
	if err != nil {
		return durable.CommandAppendResult{}, fmt.Errorf("postgres: command append: %w", err)
	}
	conn, ctx, done, err := s.writing(ctx)
	if err != nil {
		return durable.CommandAppendResult{}, fmt.Errorf("postgres: appending command %s: %w", c.CommandID, err)
	}
	defer done()
	var res durable.CommandAppendResult
	err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		res = durable.CommandAppendResult{}
		var last int64
		if err := tx.QueryRow(ctx, `SELECT last_seq FROM command_seq FOR UPDATE`).Scan(&last); err != nil {
			return fmt.Errorf("locking command_seq: %w", err)
		}
		// The stored command of this id, if any, and the largest seq
		// stored: rows another writer inserted with seqs of their own
		// (commands copied in with their seqs, a hand repair) do not move
		// command_seq, as they move SQLite's AUTOINCREMENT counter, and a
		// seq at or below theirs would collide with them (every append
		// failing on the primary key) or sort before them.
		var dup *int64
		var stored int64
		if err := tx.QueryRow(ctx, `SELECT (SELECT seq FROM commands WHERE command_id = $1),
			(SELECT COALESCE(MAX(seq), 0) FROM commands)`, keyText(c.CommandID)).Scan(&dup, &stored); err != nil {
			return err
		}
		if dup != nil {
			res.Seq, res.Duplicate = *dup, true
			return nil
		}
		last = max(last, stored)
		if last == math.MaxInt64 {
			// last+1 would wrap to a negative seq that no consumer lists.
			return fmt.Errorf("no seq left: command_seq.last_seq is %d, the largest a bigint holds", last)
		}
		res.Seq = last + 1
		if _, err := tx.Exec(ctx, `INSERT INTO commands (seq, command_id, run_id, type, payload_json, ts, client_id, ts_text)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, res.Seq, keyText(c.CommandID), keyText(c.RunID), keyText(c.Type), string(payloadJSON),
			timeArg(c.TS), nullKey(c.ClientID), nullKey(c.TSText())); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE command_seq SET last_seq = $1`, res.Seq); err != nil {
			return err
		}
		res.Accepted = true
		return nil
	})
	if err != nil {
		return durable.CommandAppendResult{}, fmt.Errorf("postgres: appending command %s: %w", c.CommandID, err)
	}
	if res.Accepted {
		c.Seq = res.Seq
	}
	return res, nil
}

// CommandListAfter implements store.CommandStore; limit <= 0 means 1000.
func (s *Store) CommandListAfter(ctx context.Context, after int64, limit int) ([]*durable.CommandRecord, int64, error) {
	if limit <= 0 {
		limit = 1000
	}
	rows, err := s.pool.Query(ctx, `SELECT seq, command_id, run_id, type, payload_json, ts, client_id, ts_text
		FROM commands WHERE seq > $1 ORDER BY seq ASC LIMIT $2`, after, limit)
	if err != nil {
		return nil, after, fmt.Errorf("postgres: listing commands: %w", err)
	}
	defer rows.Close()
	var out []*durable.CommandRecord
	next := after
	for rows.Next() {
		var c durable.CommandRecord
		var payload []byte
		var ts *time.Time
		var client, tsText *string
		if err := rows.Scan(&c.Seq, &c.CommandID, &c.RunID, &c.Type, &payload, &ts, &client, &tsText); err != nil {
			return nil, after, fmt.Errorf("postgres: listing commands: %w", err)
		}
		// As Python's reader and the SQLite store: a payload that is not a
		// JSON object (hand edited, another tool) reads as {} rather than
		// failing the page, which would wedge every consumer behind it.
		if m, err := pyjson.DecodeObject(payload); err == nil {
			c.Payload = m
		}
		if c.Payload == nil {
			c.Payload = map[string]any{}
		}
		if text := derefKey(tsText); text != "" {
			c.SetTSText(text)
		} else {
			c.TS = timeOf(ts)
		}
		c.CommandID, c.RunID, c.Type = keyTextOf(c.CommandID), keyTextOf(c.RunID), keyTextOf(c.Type)
		c.ClientID = derefKey(client)
		out = append(out, &c)
		next = c.Seq
	}
	if err := rows.Err(); err != nil {
		return nil, after, fmt.Errorf("postgres: listing commands: %w", err)
	}
	return out, next, nil
}

// CommandLastSeq implements store.CommandStore.
func (s *Store) CommandLastSeq(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, `SELECT COALESCE(MAX(seq), 0) FROM commands`).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: last command seq: %w", err)
	}
	return n, nil
}

// CommandDeleteByRun implements store.CommandStore.
func (s *Store) CommandDeleteByRun(ctx context.Context, runID string) (int, error) {
	runID = pyval.Strip(runID) // as Python's delete_by_run
	conn, ctx, done, err := s.writing(ctx)
	if err != nil {
		return 0, fmt.Errorf("postgres: deleting commands of %s: %w", runID, err)
	}
	defer done()
	tag, err := conn.Exec(ctx, `DELETE FROM commands WHERE run_id = $1`, keyText(runID))
	if err != nil {
		return 0, fmt.Errorf("postgres: deleting commands of %s: %w", runID, err)
	}
	return int(tag.RowsAffected()), nil
}

// CursorLoad implements store.CommandStore (0 when the consumer has none).
func (s *Store) CursorLoad(ctx context.Context, consumer string) (int64, error) {
	var n int64
	err := s.pool.QueryRow(ctx, `SELECT cursor FROM command_cursors WHERE consumer_id = $1`, idText(consumer)).Scan(&n)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("postgres: loading cursor %s: %w", consumer, err)
	}
	return n, nil
}

// CursorSave implements store.CommandStore.
func (s *Store) CursorSave(ctx context.Context, consumer string, cursor int64) error {
	conn, ctx, done, err := s.writing(ctx)
	if err != nil {
		return fmt.Errorf("postgres: saving cursor %s: %w", consumer, err)
	}
	defer done()
	_, err = conn.Exec(ctx, `INSERT INTO command_cursors (consumer_id, cursor, updated_at) VALUES ($1, $2, now())
		ON CONFLICT (consumer_id) DO UPDATE SET cursor = excluded.cursor, updated_at = excluded.updated_at`,
		idText(consumer), cursor)
	if err != nil {
		return fmt.Errorf("postgres: saving cursor %s: %w", consumer, err)
	}
	return nil
}
