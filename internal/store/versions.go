package store

import (
	"database/sql"
	"encoding/json"
)

// LockFeature prepares a change that depends on what a flag is now
// (domain.CheckVersion): on PostgreSQL it locks the flag's row until tx
// ends, so a concurrent transaction that locks it too waits and then reads
// the state this one commits. SQLite runs one write transaction at a time
// (groupCommit in this process, BEGIN IMMEDIATE across processes), so there
// is nothing to lock. A flag that does not exist is not an error here.
func (tx *Tx) LockFeature(name string) error {
	return tx.lock(`SELECT 1 FROM features WHERE name = $1 FOR UPDATE`, name)
}

// LockSegment is LockFeature for a segment.
func (tx *Tx) LockSegment(id int) error {
	return tx.lock(`SELECT 1 FROM segments WHERE id = $1 FOR UPDATE`, id)
}

// lock runs a row-locking query on PostgreSQL.
func (tx *Tx) lock(query string, arg any) error {
	if tx.s.dialect.Name != "postgres" {
		return nil
	}
	rows, err := tx.query(query, arg)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
	}
	return tx.s.translate(rows.Err())
}

// LastFeatureChangeBy names who wrote the newest event about a flag ("" when
// it has none).
func (q Q) LastFeatureChangeBy(name string) (string, error) {
	var by string
	err := q.q.QueryRowContext(q.ctx, `SELECT created_by FROM events WHERE feature_name = $1 ORDER BY id DESC LIMIT 1`, name).Scan(&by)
	if err == sql.ErrNoRows {
		return "", nil
	}
	return by, q.s.translate(err)
}

// segmentEventsScanned bounds how many of the newest segment events
// LastSegmentChangeBy reads to find one segment's.
const segmentEventsScanned = 200

// LastSegmentChangeBy names who wrote the newest event about segment id
// among the latest segment events ("" when none of them is about it).
func (q Q) LastSegmentChangeBy(id int) (string, error) {
	rows, err := q.query(`SELECT created_by, COALESCE(data, pre_data) FROM events
		WHERE type IN ('segment-created', 'segment-updated', 'segment-deleted') ORDER BY id DESC LIMIT $1`, segmentEventsScanned)
	if err != nil {
		return "", err
	}
	defer rows.Close()
	for rows.Next() {
		var by string
		var data sql.NullString
		if err := rows.Scan(&by, &data); err != nil {
			return "", q.s.translate(err)
		}
		var sg struct{ ID int }
		if json.Unmarshal([]byte(data.String), &sg) == nil && sg.ID == id {
			return by, nil
		}
	}
	return "", q.s.translate(rows.Err())
}
