package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
)

// SchemaSQL exposes schemaSQL to the external tests.
var SchemaSQL = schemaSQL

// KeyTextOf exposes keyTextOf: the value a key column's text holds.
var KeyTextOf = keyTextOf

// ClaimExpiry returns a claim's expires_at and the server's clock, read
// in one statement.
func (s *Store) ClaimExpiry(ctx context.Context, runID string) (expires, serverNow time.Time, err error) {
	err = s.pool.QueryRow(ctx, `SELECT expires_at, clock_timestamp() FROM run_claims WHERE run_id = $1`, runID).Scan(&expires, &serverNow)
	return expires, serverNow, err
}

// BeginOnPool begins a transaction on one of the store's own connections.
func (s *Store) BeginOnPool(ctx context.Context) (pgx.Tx, error) { return s.pool.Begin(ctx) }

// MigrationSQL returns the up script of migration version.
func MigrationSQL(version int) (string, error) {
	ms, err := migrations()
	if err != nil {
		return "", err
	}
	return ms[version-1].sql, nil
}
