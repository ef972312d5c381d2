package server_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/bunting-flags/bunting/internal/access"
	"github.com/bunting-flags/bunting/internal/server/servertest"
)

// BenchmarkAccessRequest compares, side by side in one run, admin requests
// made by a person with the Admin root role and by a Viewer who is in 20
// groups, each holding a project role in 10 of 200 projects (and who holds
// a role of their own in each of those projects too): reading a flag,
// listing the 200 projects, and switching a flag. Requests are served in
// process (Server.ServeHTTP), so the figure is the server's time; cpu-ns/op
// is the process's CPU time (user and system, every goroutine) per request,
// which a busy machine disturbs less than the wall time.
func BenchmarkAccessRequest(b *testing.B) {
	h := servertest.Start(b, servertest.NewSQLite(b))
	a := h.AdminToken
	for i := range 200 {
		p := fmt.Sprintf("p%03d", i)
		h.Do(b, "POST", "/api/admin/projects", a, map[string]any{"id": p, "name": p}).Want(b, 201)
	}
	h.Do(b, "POST", "/api/admin/projects/p150/features", a, map[string]any{"name": "bench-flag"}).Want(b, 201)
	admin, _ := matrixUser(b, h, "bench-admin", 1)
	member, uid := matrixUser(b, h, "bench-member", 3)
	for g := range 20 {
		var group struct{ ID int64 }
		h.Do(b, "POST", "/api/admin/groups", a, map[string]any{"name": fmt.Sprintf("g%02d", g),
			"users": []any{map[string]any{"user": map[string]any{"id": uid}}}}).Want(b, 201).JSON(b, &group)
		for i := range 10 {
			p := fmt.Sprintf("p%03d", g*10+i)
			h.Do(b, "PUT", fmt.Sprintf("/api/admin/projects/%s/groups/%d/roles", p, group.ID), a, map[string]any{"roles": []int{5}}).Want(b, 200)
			h.Do(b, "PUT", fmt.Sprintf("/api/admin/projects/%s/users/%d/roles", p, uid), a, map[string]any{"roles": []int{4}}).Want(b, 200)
		}
	}
	var prof struct{ Projects []string }
	h.Do(b, "GET", "/api/admin/user/profile", member, nil).Want(b, 200).JSON(b, &prof)
	if len(prof.Projects) != 201 { // and default
		b.Fatalf("the member holds roles in %d projects", len(prof.Projects))
	}
	serve := func(b *testing.B, method, path, token string, want int) {
		req := httptest.NewRequest(method, path, nil)
		req.Header.Set("Authorization", token)
		rec := httptest.NewRecorder()
		h.Server.ServeHTTP(rec, req)
		if rec.Code != want {
			b.Fatalf("%s %s: %d %s", method, path, rec.Code, rec.Body)
		}
	}
	// What the cache saves: the member's grants from the cache, and loaded
	// (the roles, the project modes and the member's roles read and
	// compiled), as after a change of access.
	shared := access.NewService(h.Store)
	for _, cached := range []bool{true, false} {
		b.Run(map[bool]string{true: "grants/cached", false: "grants/loaded"}[cached], func(b *testing.B) {
			ctx := context.Background()
			cpu0 := processCPU()
			for b.Loop() {
				svc := shared
				if !cached {
					svc = access.NewService(h.Store)
				}
				if g, err := svc.ForUser(ctx, uid); err != nil || !g.IsMember("p150") {
					b.Fatalf("grants: %v", err)
				}
			}
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
		})
	}
	for _, c := range []struct {
		name, method, path string
		want               int
		toggle             bool
	}{
		{"get-flag", "GET", "/api/admin/projects/p150/features/bench-flag", 200, false},
		{"list-projects", "GET", "/api/admin/projects", 200, false},
		{"switch-flag", "POST", "/api/admin/projects/p150/features/bench-flag/environments/development", 200, true},
	} {
		for _, who := range []struct{ name, token string }{{"admin-root-role", admin}, {"20-groups-200-projects", member}} {
			b.Run(c.name+"/"+who.name, func(b *testing.B) {
				serve(b, c.method, c.path+map[bool]string{true: "/on"}[c.toggle], who.token, c.want) // warm
				on := false
				cpu0 := processCPU()
				for b.Loop() {
					path := c.path
					if c.toggle {
						on = !on
						path += map[bool]string{true: "/on", false: "/off"}[on]
					}
					serve(b, c.method, path, who.token, c.want)
				}
				b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N), "cpu-ns/op")
			})
		}
	}
}
