// Package wire is the proxy's byte-level HTTP code, kept apart from its
// routes and state so that the hot path can be read (and benchmarked) on
// its own:
//
//   - reading a request: the query-string context (ParseQuery), the POST
//     body scanner (ParsePostBody, ReadBody, CheckContentType);
//   - writing an answer: a snapshot's precomputed JSON fragments
//     (Encoding), the weak ETag and If-None-Match (ETag, WeakETag),
//     gzip and the shared header values (WriteJSON, WriteCachedJSON);
//   - sending it: large answers leave in one system call (CoalesceWrites).
//
// Nothing here knows about keys, routes or configuration.
package wire
