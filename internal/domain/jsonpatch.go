package domain

import (
	"encoding/json"
	"reflect"
	"strconv"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
)

// PatchOp is one JSON Patch (RFC 6902) operation; move and copy are not
// supported.
type PatchOp struct {
	Op    string          `json:"op"`
	Path  string          `json:"path"`
	Value json.RawMessage `json:"value"`
}

// ApplyPatch applies ops to the JSON document doc and returns the result.
func ApplyPatch(doc []byte, ops []PatchOp) ([]byte, error) {
	var root any
	if err := json.Unmarshal(doc, &root); err != nil {
		return nil, apierr.Internal(err)
	}
	for i, op := range ops {
		var err error
		if root, err = applyOp(root, op); err != nil {
			return nil, apierr.Validation("Patch operation %d (%s %s): %s", i, op.Op, op.Path, err.Error())
		}
	}
	return json.Marshal(root)
}

type patchError string

func (e patchError) Error() string { return string(e) }

func applyOp(root any, op PatchOp) (any, error) {
	if op.Path == "" || op.Path[0] != '/' {
		return nil, patchError("the path must start with /")
	}
	var value any
	if op.Op != "remove" {
		if len(op.Value) == 0 {
			return nil, patchError("a value is required")
		}
		if err := json.Unmarshal(op.Value, &value); err != nil {
			return nil, patchError("the value is not valid JSON")
		}
	}
	parts := strings.Split(op.Path[1:], "/")
	for i := range parts {
		parts[i] = strings.NewReplacer("~1", "/", "~0", "~").Replace(parts[i])
	}
	parent, err := walk(root, parts[:len(parts)-1])
	if err != nil {
		return nil, err
	}
	key := parts[len(parts)-1]
	switch container := parent.(type) {
	case map[string]any:
		_, exists := container[key]
		switch op.Op {
		case "add":
			container[key] = value
		case "replace":
			if !exists {
				return nil, patchError("the path does not exist")
			}
			container[key] = value
		case "remove":
			if !exists {
				return nil, patchError("the path does not exist")
			}
			delete(container, key)
		case "test":
			if !reflect.DeepEqual(container[key], value) {
				return nil, patchError("the test failed")
			}
		default:
			return nil, patchError("unsupported operation")
		}
		return root, nil
	case []any:
		return patchArray(root, parts, container, key, op.Op, value)
	default:
		return nil, patchError("the path does not exist")
	}
}

func patchArray(root any, parts []string, arr []any, key, op string, value any) (any, error) {
	idx := len(arr)
	if key != "-" {
		n, err := strconv.Atoi(key)
		if err != nil || n < 0 || n > len(arr) || (op != "add" && n == len(arr)) {
			return nil, patchError("the array index is out of range")
		}
		idx = n
	}
	var out []any
	switch op {
	case "add":
		out = append(append(append([]any{}, arr[:idx]...), value), arr[idx:]...)
	case "replace":
		if idx >= len(arr) {
			return nil, patchError("the array index is out of range")
		}
		out = append([]any{}, arr...)
		out[idx] = value
	case "remove":
		if idx >= len(arr) {
			return nil, patchError("the array index is out of range")
		}
		out = append(append([]any{}, arr[:idx]...), arr[idx+1:]...)
	case "test":
		if idx >= len(arr) || !reflect.DeepEqual(arr[idx], value) {
			return nil, patchError("the test failed")
		}
		return root, nil
	default:
		return nil, patchError("unsupported operation")
	}
	if len(parts) == 1 {
		return out, nil
	}
	grand, err := walk(root, parts[:len(parts)-2])
	if err != nil {
		return nil, err
	}
	switch g := grand.(type) {
	case map[string]any:
		g[parts[len(parts)-2]] = out
	case []any:
		i, _ := strconv.Atoi(parts[len(parts)-2])
		g[i] = out
	}
	return root, nil
}

func walk(node any, parts []string) (any, error) {
	for _, p := range parts {
		switch n := node.(type) {
		case map[string]any:
			next, ok := n[p]
			if !ok {
				return nil, patchError("the path does not exist")
			}
			node = next
		case []any:
			i, err := strconv.Atoi(p)
			if err != nil || i < 0 || i >= len(n) {
				return nil, patchError("the path does not exist")
			}
			node = n[i]
		default:
			return nil, patchError("the path does not exist")
		}
	}
	return node, nil
}
