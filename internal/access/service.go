package access

import (
	"context"
	"sync"
	"time"

	"github.com/bunting-flags/bunting/internal/store"
)

// cacheTTL bounds how long a change made through another instance (which
// does not move this process's store.AccessRevision) takes to be seen
// here, as the token cache does for credentials.
const cacheTTL = 5 * time.Second

// Service loads Grants and keeps them: the roles' definitions and the
// project modes once per access revision (a snapshot), and each person's
// compiled Grants until the snapshot changes. A request by someone whose
// Grants are cached costs a map lookup.
type Service struct {
	store *store.Store
	now   func() time.Time

	mu    sync.Mutex
	snap  *snapshot
	users map[int64]*Grants
	// usersOf is the snapshot users was filled from.
	usersOf *snapshot
}

// snapshot is every role's definition and every project's mode at one
// access revision.
type snapshot struct {
	rev   int64
	at    time.Time
	roles map[int64]*roleDef
	modes map[string]string
}

// NewService returns a Service reading st.
func NewService(st *store.Store) *Service {
	return &Service{store: st, now: time.Now, users: map[int64]*Grants{}}
}

// ForUser returns the Grants of the person or service account id.
func (s *Service) ForUser(ctx context.Context, id int64) (*Grants, error) {
	snap, err := s.snapshot(ctx)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.usersOf != snap {
		clear(s.users)
		s.usersOf = snap
	}
	g, ok := s.users[id]
	s.mu.Unlock()
	if ok {
		return g, nil
	}
	a, err := s.store.Q(ctx).AccessOfUser(id)
	if err != nil {
		return nil, err
	}
	g = compile(snap, a)
	s.mu.Lock()
	if s.usersOf == snap {
		if len(s.users) > 100000 {
			clear(s.users)
		}
		s.users[id] = g
	}
	s.mu.Unlock()
	return g, nil
}

// ProjectMode returns a project's mode as the current snapshot knows it.
func (s *Service) ProjectMode(ctx context.Context, project string) (string, error) {
	snap, err := s.snapshot(ctx)
	if err != nil {
		return "", err
	}
	if m, ok := snap.modes[project]; ok {
		return m, nil
	}
	return ModeOpen, nil
}

// snapshot returns the current snapshot, loading a new one when the
// access revision moved or the TTL passed.
func (s *Service) snapshot(ctx context.Context) (*snapshot, error) {
	rev, now := s.store.AccessRevision(), s.now()
	s.mu.Lock()
	snap := s.snap
	s.mu.Unlock()
	if snap != nil && snap.rev == rev && now.Sub(snap.at) < cacheTTL {
		return snap, nil
	}
	next, err := loadSnapshot(s.store.Q(ctx), rev, now)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	if s.snap == snap {
		s.snap = next
	} else {
		next = s.snap // another request loaded one meanwhile
	}
	s.mu.Unlock()
	return next, nil
}

// loadSnapshot reads every role with its permissions and every project
// that is not open.
func loadSnapshot(q store.Q, rev int64, at time.Time) (*snapshot, error) {
	roles, err := q.Roles()
	if err != nil {
		return nil, err
	}
	perms, err := q.RolePermissions()
	if err != nil {
		return nil, err
	}
	modes, err := q.ProjectModes()
	if err != nil {
		return nil, err
	}
	byRole := map[int64][]Grant{}
	for _, p := range perms {
		byRole[p.RoleID] = append(byRole[p.RoleID], Grant{Permission: p.Name, Environment: p.Environment})
	}
	snap := &snapshot{rev: rev, at: at, roles: make(map[int64]*roleDef, len(roles)), modes: modes}
	for _, r := range roles {
		if d, ok := predefined[r.ID]; ok && !IsCustomType(r.Type) {
			snap.roles[r.ID] = d
			continue
		}
		snap.roles[r.ID] = compileRole(r.Type, byRole[r.ID])
	}
	return snap, nil
}

// compile builds a person's Grants from what the store holds about them.
func compile(snap *snapshot, a store.UserAccess) *Grants {
	g := &Grants{modes: snap.modes, projects: map[string]*projectGrants{}}
	g.addRoot(snap.roles, a.RootRole)
	for _, id := range a.GroupRootRoles {
		g.addRoot(snap.roles, id)
	}
	for _, pr := range a.Projects {
		d := snap.roles[pr.RoleID]
		if d == nil || IsRootType(d.typ) {
			continue
		}
		pg := g.projects[pr.Project]
		if pg == nil {
			pg = &projectGrants{}
			g.projects[pr.Project] = pg
		}
		pg.perms = pg.perms.or(d.project)
		pg.allEnv = pg.allEnv.or(d.allEnv)
		pg.anyEnv = pg.anyEnv.or(d.allEnv)
		for env, b := range d.env {
			if pg.env == nil {
				pg.env = map[string]bits{}
			}
			pg.env[env] = pg.env[env].or(b)
			pg.anyEnv = pg.anyEnv.or(b)
		}
		pg.roles = append(pg.roles, pr.RoleID)
	}
	return g
}
