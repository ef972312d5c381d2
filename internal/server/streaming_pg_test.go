package server_test

import (
	"testing"
	"time"

	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// TestStreamingAcrossInstances: two instances on one PostgreSQL database; a
// change written on one reaches the streams, the delta endpoint and the
// client API of the other through LISTEN/NOTIFY: the reader's revision poll
// is set to an hour, so a change that arrives at all came by notification
// (how fast is measured by make bench-stream, not asserted here).
func TestStreamingAcrossInstances(t *testing.T) {
	db := servertest.NewPostgres(t)
	writer := servertest.Start(t, db)
	reader := servertest.Start(t, db, func(c *server.Config) { c.RevisionPollInterval = time.Hour })
	st := openStream(t, reader, "/api/client/streaming", reader.ClientToken)
	wantTypes(t, st.next(t), "unleash-connected", "hydration:0")
	delta := reader.Do(t, "GET", "/api/client/delta", reader.ClientToken, nil).Want(t, 200)
	for i, name := range []string{"pg-a", "pg-b", "pg-c"} {
		createFlag(t, writer, name)
		ev := st.next(t)
		wantTypes(t, ev, "unleash-updated", "feature-updated:"+name)
		var features struct{ Features []map[string]any }
		reader.Do(t, "GET", "/api/client/features", reader.ClientToken, nil).Want(t, 200).JSON(t, &features)
		if len(features.Features) != i+1 {
			t.Fatalf("the other instance's client API serves %d flags after %d changes", len(features.Features), i+1)
		}
	}
	var body struct{ Events []map[string]any }
	reader.Do(t, "GET", "/api/client/delta", reader.ClientToken, nil, "If-None-Match", delta.Header.Get("ETag")).Want(t, 200).JSON(t, &body)
	if len(body.Events) != 3 {
		t.Fatalf("delta since the first poll: %v", body.Events)
	}
}
