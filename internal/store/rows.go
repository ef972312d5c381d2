package store

// scanner is one row to read: *sql.Row or *sql.Rows.
type scanner = interface{ Scan(dest ...any) error }

// eachRow runs query and calls fn on each row in order, then closes the
// rows. The first error (of the query, of fn or of the iteration) stops
// the loop and is returned as a domain error.
func (q Q) eachRow(fn func(row scanner) error, query string, args ...any) error {
	rows, err := q.query(query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return q.s.translate(err)
		}
	}
	return q.s.translate(rows.Err())
}

// collect runs query and returns the value scan reads from each row, in
// order: an empty, non-nil slice when there are no rows. The rows are
// closed when it returns, so the caller may query again right away (inside
// a transaction too).
func collect[T any](q Q, scan func(row scanner) (T, error), query string, args ...any) ([]T, error) {
	out := []T{}
	err := q.eachRow(func(row scanner) error {
		v, err := scan(row)
		if err != nil {
			return err
		}
		out = append(out, v)
		return nil
	}, query, args...)
	if err != nil {
		return nil, err
	}
	return out, nil
}

// scanString reads a row of one text column.
func scanString(row scanner) (string, error) {
	var s string
	err := row.Scan(&s)
	return s, err
}

// scanInt reads a row of one integer column.
func scanInt(row scanner) (int, error) {
	var n int
	err := row.Scan(&n)
	return n, err
}
