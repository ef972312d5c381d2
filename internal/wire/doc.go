// Package wire is the byte-level HTTP code of the evaluation answers that
// both products serve (the proxy's /proxy, the server's /api/frontend,
// OFREP on both), kept apart from routes and state so that the hot path
// can be read (and benchmarked) on its own:
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
