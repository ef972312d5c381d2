package wire

import (
	"errors"
	"io"
	"net/http"
	"slices"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// ReadBody reads the whole body into buf, failing with 413 past limit.
func ReadBody(w http.ResponseWriter, r *http.Request, limit int64, buf []byte) ([]byte, error) {
	if r.ContentLength > limit {
		return buf, apierr.TooLarge("the request body is larger than the limit of %d bytes", limit)
	}
	if n := r.ContentLength; n > int64(cap(buf)) {
		buf = slices.Grow(buf, int(n)+1) // read once into a buffer of the right size
	}
	rd := http.MaxBytesReader(w, r.Body, limit)
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := rd.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, bodyError(err)
		}
	}
}

// bodyError is the answer to a body that could not be read: 413 past the
// limit, otherwise 400 (the client went away or was too slow for the
// read timeout), not an internal error.
func bodyError(err error) error {
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		return apierr.From(err)
	}
	return apierr.Validation("could not read the request body: %v", err)
}
