package signals

import (
	"net/http"
	"strconv"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// bodyLimit caps the admin request bodies of the signal surfaces.
const bodyLimit = 1 << 20

// pathID parses a numeric path value; anything else is a 404, as the
// resource cannot exist.
func pathID(r *http.Request, name string) (int64, error) {
	v := r.PathValue(name)
	id, err := strconv.ParseInt(v, 10, 64)
	if err != nil || id <= 0 {
		return 0, apierr.NotFound("Could not find %s %q", name, v)
	}
	return id, nil
}

// paging reads limit and offset query parameters with a default and a
// maximum limit; bad values are a 400 naming the parameter.
func paging(r *http.Request, defaultLimit, maxLimit int) (limit, offset int, err error) {
	limit, offset = defaultLimit, 0
	q := r.URL.Query()
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > maxLimit {
			return 0, 0, apierr.Validation("The `limit` query parameter must be a whole number from 1 to %d; you sent %q.", maxLimit, v)
		}
		limit = n
	}
	if v := q.Get("offset"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 {
			return 0, 0, apierr.Validation("The `offset` query parameter must be a whole number of 0 or more; you sent %q.", v)
		}
		offset = n
	}
	return limit, offset, nil
}
