package engine

// fieldKind says where a context field lives: one of the built-in struct
// fields, or Properties.
type fieldKind uint8

const (
	fieldProperty fieldKind = iota
	fieldUserID
	fieldSessionID
	fieldRemoteAddress
	fieldEnvironment
	fieldAppName
	fieldCurrentTime
)

// field is a compiled reference to a context field by name.
type field struct {
	kind fieldKind
	// slot numbers the distinct field names of a snapshot, for the
	// per-evaluation value cache (see evalState.fields).
	slot int32
	name string
}

// fieldTable gives each distinct field name of a snapshot its slot.
type fieldTable struct {
	slots map[string]int32
}

func newFieldTable() *fieldTable { return &fieldTable{slots: make(map[string]int32)} }

// field compiles a reference to the field called name.
func (t *fieldTable) field(name string) field {
	f := newField(name)
	slot, ok := t.slots[name]
	if !ok {
		slot = int32(len(t.slots))
		t.slots[name] = slot
	}
	f.slot = slot
	return f
}

// size is the number of distinct field names.
func (t *fieldTable) size() int { return len(t.slots) }

func newField(name string) field {
	switch name {
	case "userId":
		return field{kind: fieldUserID, name: name}
	case "sessionId":
		return field{kind: fieldSessionID, name: name}
	case "remoteAddress":
		return field{kind: fieldRemoteAddress, name: name}
	case "environment":
		return field{kind: fieldEnvironment, name: name}
	case "appName":
		return field{kind: fieldAppName, name: name}
	case "currentTime":
		return field{kind: fieldCurrentTime, name: name}
	}
	return field{kind: fieldProperty, name: name}
}

// lookup returns the value of the field and whether it is present. A
// built-in field that is empty on the struct falls back to Properties under
// the same name (what Node's resolveContextValue does); any other name is
// read from Properties only. A present property may be the empty string.
func (f field) lookup(ctx *Context) (string, bool) {
	var v string
	switch f.kind {
	case fieldUserID:
		v = ctx.UserID
	case fieldSessionID:
		v = ctx.SessionID
	case fieldRemoteAddress:
		v = ctx.RemoteAddress
	case fieldEnvironment:
		v = ctx.Environment
	case fieldAppName:
		v = ctx.AppName
	case fieldCurrentTime:
		v = ctx.CurrentTime
	}
	if v != "" {
		return v, true
	}
	if ctx.Properties == nil {
		return "", false
	}
	v, ok := ctx.Properties[f.name]
	return v, ok
}
