package pgstore

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// migrations[i] brings the schema from version i to i+1. A step runs in
// one SERIALIZABLE transaction together with the update of the version
// row, so of several instances starting at once exactly one applies it;
// the others fail to serialize, retry, and find it applied. Steps only add
// (CREATE ... IF NOT EXISTS), so a step that meets a half-finished
// concurrent one is harmless. Append new steps; never edit released ones.
var migrations = [][]string{
	{
		// h is a hash of k (keyHash): point reads go through the
		// primary key (h, k), whose pages hold keys in hash order, and
		// range scans through lazuli_kv_k. See keyHash for why.
		`CREATE TABLE IF NOT EXISTS lazuli_kv (h BIGINT NOT NULL, k BYTEA NOT NULL, v BYTEA NOT NULL, PRIMARY KEY (h, k))`,
		`CREATE INDEX IF NOT EXISTS lazuli_kv_k ON lazuli_kv (k)`,
		`CREATE TABLE IF NOT EXISTS lazuli_chunks (ref TEXT PRIMARY KEY, written TIMESTAMPTZ NOT NULL,
			size BIGINT NOT NULL, complete BOOLEAN NOT NULL)`,
		`CREATE TABLE IF NOT EXISTS lazuli_chunk_parts (ref TEXT NOT NULL, seq INT NOT NULL, data BYTEA NOT NULL,
			PRIMARY KEY (ref, seq))`,
	},
	{
		// Placeholder rows spread over the hash space, so that the
		// primary key has hundreds of leaf pages however few keys the
		// table holds. See placeholders.
		sqlPlaceholders,
	},
}

// placeholders is how many placeholder rows schema version 2 adds to
// lazuli_kv: one every 2^51 values of h, each under a 256-byte key
// beginning with reservedKeys (which no Scan reaches and no Update may
// write), with an empty value.
//
// Why: PostgreSQL's SERIALIZABLE records what a transaction read as
// locks on whole index pages, and so two transactions that read and
// write unrelated keys on one leaf page of the primary key fail to
// serialize as surely as if they had touched one row. Hashing keys (see
// keyHash) spreads them over the pages, but a table of a few thousand
// keys has only a few dozen, and an empty one a single page: 16 clients
// each writing new blobs into a fresh container on an otherwise empty
// database ran 0.72 attempts again per Put Blob (141 ops/s), against
// 0.01 (767 ops/s) on one holding 60,000 other keys. With the
// placeholders (7.5 MB with both indexes) the primary key starts with
// about 300 leaf pages, each covering a slice of the hash space that only
// its own keys fall in. Long keys make as many pages of fewer rows: the
// step takes a quarter of the time 65,536 short keys took.
const placeholders = 1 << 13

// reservedKeys begins every key the engine keeps for itself: the
// placeholders' (reservedKeys, the big-endian 32-bit number of the
// placeholder, zeros up to placeholderKeyLen bytes). Keys made by lazuli
// begin with a record kind byte below 0xFF, and a UTF-8 name never holds
// an 0xFF byte.
const reservedKeys = "\xff\xff\xff\xff\xff\xff\xff\xff"

const placeholderKeyLen = 256

// sqlPlaceholders inserts the placeholders: h runs from -2^63 + 2^50 up
// in steps of 2^51; ON CONFLICT lets an instance racing another's
// migration through.
var sqlPlaceholders = fmt.Sprintf("INSERT INTO lazuli_kv (h, k, v) SELECT (i - %d) * %d + %d, "+
	"'\\x%x'::bytea || decode(lpad(to_hex(i), 8, '0') || repeat('00', %d), 'hex'), ''::bytea "+
	"FROM generate_series(0, %d) AS i ON CONFLICT (h, k) DO NOTHING",
	placeholders/2, int64(1)<<51, int64(1)<<50, reservedKeys, placeholderKeyLen-len(reservedKeys)-4, placeholders-1)

// SchemaVersion is the schema version this lazuli writes.
var SchemaVersion = len(migrations)

const sqlSchemaTable = `CREATE TABLE IF NOT EXISTS lazuli_schema (id INT PRIMARY KEY, version INT NOT NULL)`

// migrate creates the version table and applies the missing steps.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	for attempt := 0; ; attempt++ {
		done, err := migrateStep(ctx, pool)
		if done {
			return nil
		}
		if err != nil && !raceErr(err) {
			return fmt.Errorf("pgstore: schema: %w", err)
		}
		if attempt == 100 {
			return fmt.Errorf("pgstore: schema: still racing other instances after %d attempts: %v", attempt, err)
		}
		if err != nil {
			if serr := sleep(ctx, backoff(attempt)*4); serr != nil {
				return serr
			}
		}
	}
}

// migrateStep applies at most one step; done reports the schema current.
func migrateStep(ctx context.Context, pool *pgxpool.Pool) (done bool, err error) {
	if _, err := pool.Exec(ctx, sqlSchemaTable); err != nil {
		return false, err
	}
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if err != nil {
		return false, err
	}
	defer tx.Rollback(context.WithoutCancel(ctx))
	version := 0
	err = tx.QueryRow(ctx, "SELECT version FROM lazuli_schema WHERE id = 1").Scan(&version)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return false, err
	}
	if version > len(migrations) {
		return false, fmt.Errorf("the database has schema version %d, newer than this lazuli's %d: upgrade lazuli", version, len(migrations))
	}
	if version == len(migrations) {
		return true, tx.Commit(ctx)
	}
	for _, stmt := range migrations[version] {
		if _, err := tx.Exec(ctx, stmt); err != nil {
			return false, err
		}
	}
	if version == 0 {
		_, err = tx.Exec(ctx, "INSERT INTO lazuli_schema (id, version) VALUES (1, 1)")
	} else {
		_, err = tx.Exec(ctx, "UPDATE lazuli_schema SET version = $1 WHERE id = 1 AND version = $2", version+1, version)
	}
	if err != nil {
		return false, err
	}
	return false, tx.Commit(ctx)
}

// raceErr reports the errors that concurrent schema changes by other
// instances cause: serialization failures, deadlocks, and the duplicate
// catalog rows of two CREATE ... IF NOT EXISTS at once.
func raceErr(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	switch pe.Code {
	case "40001", "40P01", "23505", "42P07", "42710":
		return true
	}
	return false
}
