package server_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/server"
	"github.com/bunting-flags/bunting/internal/server/servertest"
	"github.com/bunting-flags/bunting/internal/store"
)

// matrixPrincipal is one caller of the permission matrix: a root role, and
// a role in the project "matrix" held directly or through a group.
type matrixPrincipal struct {
	name      string
	root      string // Admin, Editor, Viewer, SegmentKeeper (custom root role)
	viaGroup  string // a root role given by a group the person is in ("" none)
	project   string // Owner, Member, DevOnly (custom project role) or ""
	fromGroup bool   // the project role is the person's group's
	token     string
	flag      string
}

// The permissions the matrix knows, written out here rather than taken
// from internal/access, so that the test checks the rules instead of
// repeating them.
var (
	mxEditorRoot = []string{"CREATE_PROJECT", "CREATE_SEGMENT", "UPDATE_SEGMENT", "DELETE_SEGMENT", "CREATE_STRATEGY", "UPDATE_STRATEGY",
		"DELETE_STRATEGY", "CREATE_CONTEXT_FIELD", "UPDATE_CONTEXT_FIELD", "DELETE_CONTEXT_FIELD", "CREATE_TAG_TYPE", "UPDATE_TAG_TYPE", "DELETE_TAG_TYPE"}
	mxSegmentKeeper = []string{"CREATE_SEGMENT", "UPDATE_SEGMENT", "DELETE_SEGMENT"}
	mxFlagWork      = []string{"CREATE_FEATURE", "UPDATE_FEATURE", "DELETE_FEATURE", "UPDATE_FEATURE_DEPENDENCY"}
	mxEnvWork       = []string{"CREATE_FEATURE_STRATEGY", "UPDATE_FEATURE_STRATEGY", "DELETE_FEATURE_STRATEGY", "UPDATE_FEATURE_ENVIRONMENT",
		"UPDATE_FEATURE_ENVIRONMENT_VARIANTS"}
	mxOwnerOnly = []string{"UPDATE_PROJECT", "DELETE_PROJECT", "PROJECT_USER_ACCESS_WRITE"}
	// DevOnly holds UPDATE_FEATURE, and in development only
	// UPDATE_FEATURE_ENVIRONMENT and CREATE_FEATURE_STRATEGY.
	mxDevOnly    = []string{"UPDATE_FEATURE"}
	mxDevOnlyEnv = []string{"UPDATE_FEATURE_ENVIRONMENT", "CREATE_FEATURE_STRATEGY"}
)

// mxExpect says whether p may use a route needing perm, in the project
// "matrix" when inProject (else outside any project) and in env.
func mxExpect(t *testing.T, p matrixPrincipal, perm string, inProject bool, env string) bool {
	root := p.root
	if p.viaGroup == "Editor" && root == "Viewer" {
		root = "Editor"
	}
	proj := p.project
	if !inProject {
		proj = ""
	}
	switch {
	case root == "Admin":
		return true
	case perm == "ADMIN", slices.Contains(mxAdminOnly, perm):
		return false
	case slices.Contains(mxEditorRoot, perm):
		return root == "Editor" || (root == "SegmentKeeper" && slices.Contains(mxSegmentKeeper, perm))
	case slices.Contains(mxFlagWork, perm):
		return root == "Editor" || proj == "Owner" || proj == "Member" || (proj == "DevOnly" && slices.Contains(mxDevOnly, perm))
	case slices.Contains(mxEnvWork, perm):
		return root == "Editor" || proj == "Owner" || proj == "Member" ||
			(proj == "DevOnly" && env == "development" && slices.Contains(mxDevOnlyEnv, perm))
	case perm == "PROJECT_USER_ACCESS_READ":
		return root == "Editor" || proj == "Owner"
	case slices.Contains(mxOwnerOnly, perm):
		return proj == "Owner"
	}
	t.Fatalf("the permission matrix has no rule for %s: add one", perm)
	return false
}

// mxAdminOnly are the permissions of the Admin root role alone among the
// predefined roles (a custom root role may hold them): integrations and
// sign-in settings.
var mxAdminOnly = []string{"CREATE_ADDON", "UPDATE_ADDON", "DELETE_ADDON", "UPDATE_AUTH_CONFIGURATION"}

// mxPath fills a route pattern's path values: the matrix project, the
// caller's own flag, an environment, and for everything else a value that
// names nothing (an allowed caller gets a 404 or a 400, never a 403).
func mxPath(pattern, flag, env string) string {
	_, path, _ := strings.Cut(pattern, " ")
	values := map[string]string{"projectId": "matrix", "featureName": flag, "environment": env, "strategyId": "00000000-0000-4000-8000-000000000000",
		"type": "simple", "value": "mx", "token": "nope"}
	return regexp.MustCompile(`\{([a-zA-Z]+)(\.\.\.)?\}`).ReplaceAllStringFunc(path, func(w string) string {
		name := strings.Trim(w, "{}.")
		if v, ok := values[name]; ok {
			return v
		}
		if strings.HasSuffix(name, "Id") || name == "id" {
			return "987654"
		}
		return "mx-missing"
	})
}

// TestPermissionMatrix calls every admin route that declares a permission
// (Server.Routes) as every combination of root role (Admin, Editor,
// Viewer, a custom root role), role in the route's project (none, Owner,
// Member, a custom role limited to development), held directly or through
// a group (and the root role Editor given by a group), in development and
// production for environment-scoped routes, and checks each answer: a 403
// naming the permission exactly when the caller may not, never a 403 when
// it may (other 403s, such as refusing to delete a project that has
// flags, are the operation's own rules).
func TestPermissionMatrix(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		a := h.AdminToken
		h.Do(t, "POST", "/api/admin/projects", a, map[string]any{"id": "matrix", "name": "Matrix"}).Want(t, 201)
		h.Do(t, "POST", "/api/admin/projects/matrix/features", a, map[string]any{"name": "mx-anchor"}).Want(t, 201)
		var role struct{ Roles struct{ ID int64 } }
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "SegmentKeeper", "type": "root-custom", "description": "segments",
			"permissions": []any{map[string]any{"name": "CREATE_SEGMENT"}, map[string]any{"name": "UPDATE_SEGMENT"}, map[string]any{"name": "DELETE_SEGMENT"}}}).
			Want(t, 200).JSON(t, &role)
		keeper := role.Roles.ID
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "DevOnly", "type": "custom", "description": "development only",
			"permissions": []any{map[string]any{"name": "UPDATE_FEATURE"}, map[string]any{"name": "UPDATE_FEATURE_ENVIRONMENT", "environment": "development"},
				map[string]any{"name": "CREATE_FEATURE_STRATEGY", "environment": "development"}}}).Want(t, 200).JSON(t, &role)
		roleIDs := map[string]int64{"Admin": 1, "Editor": 2, "Viewer": 3, "Owner": 4, "Member": 5, "SegmentKeeper": keeper, "DevOnly": role.Roles.ID}

		var principals []matrixPrincipal
		for _, root := range []string{"Admin", "Editor", "Viewer", "SegmentKeeper"} {
			for _, proj := range []string{"", "Owner", "Member", "DevOnly"} {
				for _, group := range []bool{false, true} {
					if proj == "" && group {
						continue
					}
					principals = append(principals, matrixPrincipal{root: root, project: proj, fromGroup: group})
				}
			}
		}
		principals = append(principals, matrixPrincipal{root: "Viewer", viaGroup: "Editor"})
		for i := range principals {
			p := &principals[i]
			p.name = fmt.Sprintf("mx%d-%s-%s-group%v-%s", i, strings.ToLower(p.root), strings.ToLower(p.project), p.fromGroup, strings.ToLower(p.viaGroup))
			var uid int64
			p.token, uid = matrixUser(t, h, p.name, roleIDs[p.root])
			switch {
			case p.project != "" && p.fromGroup:
				var g struct{ ID int64 }
				h.Do(t, "POST", "/api/admin/groups", a, map[string]any{"name": p.name, "users": []any{map[string]any{"user": map[string]any{"id": uid}}}}).Want(t, 201).JSON(t, &g)
				h.Do(t, "PUT", fmt.Sprintf("/api/admin/projects/matrix/groups/%d/roles", g.ID), a, map[string]any{"roles": []int64{roleIDs[p.project]}}).Want(t, 200)
			case p.project != "":
				h.Do(t, "PUT", fmt.Sprintf("/api/admin/projects/matrix/users/%d/roles", uid), a, map[string]any{"roles": []int64{roleIDs[p.project]}}).Want(t, 200)
			case p.viaGroup != "":
				h.Do(t, "POST", "/api/admin/groups", a, map[string]any{"name": p.name, "rootRole": roleIDs[p.viaGroup],
					"users": []any{map[string]any{"user": map[string]any{"id": uid}}}}).Want(t, 201)
			}
			p.flag = fmt.Sprintf("mx-flag-%d", i)
		}

		checks, routes := 0, 0
		for _, rt := range h.Server.Routes() {
			if rt.Surface != "admin" || rt.Permission == "" {
				continue
			}
			routes++
			method, _, _ := strings.Cut(rt.Pattern, " ")
			envs := []string{""}
			if rt.EnvScoped {
				envs = []string{"development", "production"}
			}
			inProject := strings.Contains(rt.Pattern, "{projectId}") || strings.Contains(rt.Pattern, "{featureName}")
			for _, env := range envs {
				for _, p := range principals {
					if strings.Contains(rt.Pattern, "{featureName}") {
						matrixFlag(t, h, p.flag)
					}
					path := mxPath(rt.Pattern, p.flag, cmp.Or(env, "development"))
					var body any
					if rt.JSON {
						body = map[string]any{}
					}
					res := h.Do(t, method, path, p.token, body)
					want := mxExpect(t, p, rt.Permission, inProject, env)
					var answer struct{ Message string }
					_ = json.Unmarshal(res.Body, &answer)
					checks++
					switch {
					case want && (res.Status == 401 || (res.Status == 403 && strings.Contains(answer.Message, "required permissions"))):
						t.Errorf("%s %s as %s: %s, want it allowed", method, path, p.name, res)
					case !want && res.Status != 403:
						t.Errorf("%s %s as %s: %s, want 403 naming %s", method, path, p.name, res, rt.Permission)
					case !want && !strings.Contains(answer.Message, `"`+rt.Permission+`"`):
						t.Errorf("%s %s as %s: %s does not name %s", method, path, p.name, res, rt.Permission)
					case !want && env != "" && !strings.Contains(answer.Message, `"`+env+`" environment`):
						t.Errorf("%s %s as %s: %s does not name the environment", method, path, p.name, res)
					}
				}
			}
		}
		if routes < 100 {
			t.Fatalf("only %d admin routes declare a permission: is the route table complete?", routes)
		}
		t.Logf("permission matrix: %d admin routes with a permission, %d principals, %d checks", routes, len(principals), checks)
	})
}

// matrixUser creates a person with a root role and a personal access
// token, through the store in one transaction with its event.
func matrixUser(t testing.TB, h *servertest.Harness, name string, role int64) (string, int64) {
	t.Helper()
	secret := "user:" + server.RandomHex(28)
	var id int64
	err := h.Store.Tx(context.Background(), func(tx *store.Tx) (err error) {
		if id, err = tx.InsertUser(store.User{Username: &name, RootRole: role, CreatedAt: tx.Now()}); err != nil {
			return err
		}
		if _, err := tx.InsertUserToken(store.UserToken{UserID: id, CreatedAt: tx.Now()}, secret); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: "user-created", Actor: store.Actor{Name: "test"}, Data: map[string]any{"id": id, "username": name}})
	})
	if err != nil {
		t.Fatal(err)
	}
	return secret, id
}

// matrixFlag makes sure the caller's flag exists in the matrix project and
// is not archived (an allowed caller may have archived or deleted it).
func matrixFlag(t *testing.T, h *servertest.Harness, name string) {
	t.Helper()
	admin := &domain.Principal{Kind: domain.KindAdminToken, Name: "admin"}
	err := h.Store.Tx(context.Background(), func(tx *store.Tx) error {
		f, err := tx.Feature(name)
		switch {
		case err != nil:
			_, err = domain.CreateFeature(tx, admin, "matrix", domain.CreateFeatureInput{Name: name})
			return err
		case f.Archived:
			return domain.ReviveFeature(tx, admin, name)
		case f.Project != "matrix":
			return fmt.Errorf("flag %s moved to %s", name, f.Project)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPermissionMatrixFeaturesBatch: the features-batch import has no
// route permission; each item needs its own in the target project and
// environment. Importing a new flag with a strategy, switched on, is
// allowed exactly when the caller holds CREATE_FEATURE, UPDATE_FEATURE,
// CREATE_FEATURE_STRATEGY and UPDATE_FEATURE_ENVIRONMENT there (by the
// matrix's rules); otherwise validate lists what is missing and import is
// a 403 that leaves nothing. Export needs no more than reading.
func TestPermissionMatrixFeaturesBatch(t *testing.T) {
	t.Parallel()
	servertest.Run(t, func(t *testing.T, h *servertest.Harness) {
		a := h.AdminToken
		h.Do(t, "POST", "/api/admin/projects", a, map[string]any{"id": "matrix", "name": "Matrix"}).Want(t, 201)
		var role struct{ Roles struct{ ID int64 } }
		h.Do(t, "POST", "/api/admin/roles", a, map[string]any{"name": "DevOnly", "type": "custom", "description": "development only",
			"permissions": []any{map[string]any{"name": "UPDATE_FEATURE"}, map[string]any{"name": "UPDATE_FEATURE_ENVIRONMENT", "environment": "development"},
				map[string]any{"name": "CREATE_FEATURE_STRATEGY", "environment": "development"}}}).Want(t, 200).JSON(t, &role)
		roleIDs := map[string]int64{"Admin": 1, "Editor": 2, "Viewer": 3, "Owner": 4, "Member": 5, "DevOnly": role.Roles.ID}
		needed := []string{"CREATE_FEATURE", "UPDATE_FEATURE", "CREATE_FEATURE_STRATEGY", "UPDATE_FEATURE_ENVIRONMENT"}
		i := 0
		for _, root := range []string{"Admin", "Editor", "Viewer"} {
			for _, proj := range []string{"", "Owner", "Member", "DevOnly"} {
				p := matrixPrincipal{root: root, project: proj, name: fmt.Sprintf("batch%d-%s-%s", i, root, proj)}
				i++
				var uid int64
				p.token, uid = matrixUser(t, h, p.name, roleIDs[root])
				if proj != "" {
					h.Do(t, "PUT", fmt.Sprintf("/api/admin/projects/matrix/users/%d/roles", uid), a, map[string]any{"roles": []int64{roleIDs[proj]}}).Want(t, 200)
				}
				h.Do(t, "POST", "/api/admin/features-batch/export", p.token, map[string]any{"project": "matrix", "environment": "development"}).Want(t, 200)
				for _, env := range []string{"development", "production"} {
					flag := p.name + "-" + env
					req := map[string]any{"project": "matrix", "environment": env, "data": map[string]any{
						"features":            []any{map[string]any{"name": flag}},
						"featureStrategies":   []any{map[string]any{"name": "default", "featureName": flag}},
						"featureEnvironments": []any{map[string]any{"name": flag, "featureName": flag, "enabled": true}},
					}}
					want := true
					for _, perm := range needed {
						want = want && mxExpect(t, p, perm, true, env)
					}
					var v struct {
						Permissions []struct{ AffectedItems []string }
					}
					h.Do(t, "POST", "/api/admin/features-batch/validate", p.token, req).Want(t, 200).JSON(t, &v)
					if want != (len(v.Permissions) == 0) {
						t.Errorf("validate as %s in %s: missing %+v, want allowed %v", p.name, env, v.Permissions, want)
					}
					res := h.Do(t, "POST", "/api/admin/features-batch/import", p.token, req)
					switch {
					case want && res.Status != 200:
						t.Errorf("import as %s in %s: %s, want 200", p.name, env, res)
					case !want && res.Status != 403:
						t.Errorf("import as %s in %s: %s, want 403", p.name, env, res)
					case !want:
						h.Do(t, "GET", "/api/admin/projects/matrix/features/"+flag, a, nil).WantError(t, 404, "NotFoundError")
					}
				}
			}
		}
	})
}
