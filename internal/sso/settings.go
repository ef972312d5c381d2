package sso

import (
	"encoding/json"
	"net/url"
	"slices"
	"strings"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// settingsName is the auth_settings row of the OIDC settings, and
// settingID the id their events carry (Unleash's name for them).
const (
	settingsName = "oidc"
	settingID    = "unleash.enterprise.auth.oidc"
)

// SigningAlgorithms are the ID token signature algorithms an admin may
// choose (go-oidc verifies all of them); Unleash offers the RS ones.
var SigningAlgorithms = []string{"RS256", "RS384", "RS512", "ES256", "ES384", "ES512", "PS256", "PS384", "PS512", "EdDSA"}

// Settings are the OIDC settings in Unleash's shape
// (oidcSettingsResponseSchema), with Bunting's providerName.
type Settings struct {
	Enabled     bool   `json:"enabled"`
	DiscoverURL string `json:"discoverUrl"`
	ClientID    string `json:"clientId"`
	// Secret is the client secret; it is stored sealed (secret.go) and
	// never written into the document or an event.
	Secret              string `json:"secret"`
	AutoCreate          bool   `json:"autoCreate"`
	EmailDomains        string `json:"emailDomains"`
	DefaultRootRole     string `json:"defaultRootRole"`
	DefaultRootRoleID   int    `json:"defaultRootRoleId"`
	EnableSingleSignOut bool   `json:"enableSingleSignOut"`
	EnableGroupSyncing  bool   `json:"enableGroupSyncing"`
	GroupJSONPath       string `json:"groupJsonPath"`
	AddGroupsScope      bool   `json:"addGroupsScope"`
	// IDTokenSigningAlgorithm is the one algorithm ID tokens must be
	// signed with.
	IDTokenSigningAlgorithm string `json:"idTokenSigningAlgorithm"`
	AcrValues               string `json:"acrValues"`
	EnablePKCE              bool   `json:"enablePkce"`
	// ProviderName is shown on the sign-in button ("Sign in with
	// <providerName>"); empty shows the discovery URL's host.
	ProviderName string `json:"providerName"`
}

// DefaultSettings are the settings before anyone set them.
func DefaultSettings() Settings {
	return Settings{DefaultRootRole: "Viewer", DefaultRootRoleID: int(domain.RoleViewer),
		GroupJSONPath: "groups", IDTokenSigningAlgorithm: "RS256", EnablePKCE: true}
}

// SettingsInput changes OIDC settings (Unleash's oidcSettingsSchema): a
// property left out keeps its stored value, and a secret left out, blank
// or masked keeps the stored secret.
type SettingsInput struct {
	Enabled                 *bool           `json:"enabled"`
	DiscoverURL             *string         `json:"discoverUrl"`
	ClientID                *string         `json:"clientId"`
	Secret                  *string         `json:"secret"`
	AutoCreate              *bool           `json:"autoCreate"`
	EmailDomains            *string         `json:"emailDomains"`
	DefaultRootRole         *string         `json:"defaultRootRole"`
	DefaultRootRoleID       json.RawMessage `json:"defaultRootRoleId"`
	EnableSingleSignOut     *bool           `json:"enableSingleSignOut"`
	EnableGroupSyncing      *bool           `json:"enableGroupSyncing"`
	GroupJSONPath           *string         `json:"groupJsonPath"`
	AddGroupsScope          *bool           `json:"addGroupsScope"`
	IDTokenSigningAlgorithm *string         `json:"idTokenSigningAlgorithm"`
	AcrValues               *string         `json:"acrValues"`
	EnablePKCE              *bool           `json:"enablePkce"`
	ProviderName            *string         `json:"providerName"`
}

// maskedSecret is what a form shows for a stored secret; sent back, it
// keeps the stored one.
const maskedSecret = "********"

// apply returns s changed by in, validated.
func (in SettingsInput) apply(q store.Q, s Settings) (Settings, error) {
	setB := func(dst *bool, v *bool) {
		if v != nil {
			*dst = *v
		}
	}
	setS := func(dst *string, v *string) {
		if v != nil {
			*dst = strings.TrimSpace(*v)
		}
	}
	setB(&s.Enabled, in.Enabled)
	setS(&s.DiscoverURL, in.DiscoverURL)
	setS(&s.ClientID, in.ClientID)
	if in.Secret != nil {
		if v := strings.TrimSpace(*in.Secret); v != "" && v != maskedSecret {
			s.Secret = v
		}
	}
	setB(&s.AutoCreate, in.AutoCreate)
	setS(&s.EmailDomains, in.EmailDomains)
	setB(&s.EnableSingleSignOut, in.EnableSingleSignOut)
	setB(&s.EnableGroupSyncing, in.EnableGroupSyncing)
	setS(&s.GroupJSONPath, in.GroupJSONPath)
	setB(&s.AddGroupsScope, in.AddGroupsScope)
	setS(&s.IDTokenSigningAlgorithm, in.IDTokenSigningAlgorithm)
	setS(&s.AcrValues, in.AcrValues)
	setB(&s.EnablePKCE, in.EnablePKCE)
	setS(&s.ProviderName, in.ProviderName)
	// The role id wins over the name, as in Unleash; either may name a
	// predefined or a custom root role.
	var raw json.RawMessage
	switch {
	case len(in.DefaultRootRoleID) > 0 && string(in.DefaultRootRoleID) != "null":
		raw = in.DefaultRootRoleID
	case in.DefaultRootRole != nil:
		raw, _ = json.Marshal(strings.TrimSpace(*in.DefaultRootRole))
	}
	if raw != nil {
		id, err := domain.ParseRootRole(q, raw)
		if err != nil {
			return s, apierr.Validation("The `defaultRootRoleId` or `defaultRootRole` property must name a root role: 1 (Admin), 2 (Editor), 3 (Viewer) or a custom root role's id or name. You sent %s.", string(raw))
		}
		role, err := domain.RootRoleOf(q, id)
		if err != nil {
			return s, err
		}
		s.DefaultRootRole, s.DefaultRootRoleID = role.Name, int(role.ID)
	}
	if s.GroupJSONPath == "" {
		s.GroupJSONPath = "groups"
	}
	if s.IDTokenSigningAlgorithm == "" {
		s.IDTokenSigningAlgorithm = "RS256"
	}
	return s, s.validate()
}

// validate checks settings that parse but cannot work. Disabled settings
// may be incomplete (Unleash's Terraform provider disables SSO by sending
// blank client id and secret).
func (s Settings) validate() error {
	if s.DiscoverURL != "" {
		u, err := url.Parse(s.DiscoverURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil || u.Fragment != "" {
			return apierr.Validation("The `discoverUrl` property must be the http(s) URL of the provider's discovery document (…/.well-known/openid-configuration).")
		}
	}
	if len(s.DiscoverURL) > 2000 || len(s.ClientID) > 500 || len(s.Secret) > 2000 || len(s.AcrValues) > 500 || len(s.ProviderName) > 100 || len(s.EmailDomains) > 4000 {
		return apierr.Validation("An OIDC setting is too long (URLs up to 2000 characters, the client id 500, the provider name 100).")
	}
	if !slices.Contains(SigningAlgorithms, s.IDTokenSigningAlgorithm) {
		return apierr.Validation("The `idTokenSigningAlgorithm` property must be one of %s.", strings.Join(SigningAlgorithms, ", "))
	}
	for _, d := range s.emailDomains() {
		if strings.ContainsAny(d, "@ /\\:") || !strings.Contains(d, ".") && d != "localhost" {
			return apierr.Validation("The `emailDomains` property must be a comma-separated list of domains such as example.com (got %q).", d)
		}
	}
	if _, err := ParseGroupPath(s.GroupJSONPath); err != nil {
		return err
	}
	if !s.Enabled {
		return nil
	}
	switch {
	case s.DiscoverURL == "":
		return apierr.Validation("The `discoverUrl` property is required to enable OIDC.")
	case s.ClientID == "":
		return apierr.Validation("The `clientId` property is required to enable OIDC.")
	case s.Secret == "":
		return apierr.Validation("The `secret` property (the client secret) is required to enable OIDC.")
	}
	return nil
}

// emailDomains lists the allowed domains, lower case (empty: any).
func (s Settings) emailDomains() []string {
	var out []string
	for _, d := range strings.Split(s.EmailDomains, ",") {
		if d = strings.ToLower(strings.TrimSpace(d)); d != "" {
			out = append(out, strings.TrimPrefix(d, "@"))
		}
	}
	return out
}

// allowsEmail reports whether an auto-created person may have email: any
// email when no domain is listed, else one at a listed domain.
func (s Settings) allowsEmail(email string) bool {
	ds := s.emailDomains()
	if len(ds) == 0 {
		return true
	}
	at := strings.LastIndexByte(email, '@')
	return at > 0 && slices.Contains(ds, strings.ToLower(email[at+1:]))
}

// buttonName is the provider's name on the sign-in button.
func (s Settings) buttonName() string {
	if s.ProviderName != "" {
		return s.ProviderName
	}
	if u, err := url.Parse(s.DiscoverURL); err == nil && u.Hostname() != "" {
		return u.Hostname()
	}
	return "OpenID Connect"
}

// eventData is what events record about the settings: everything but the
// secret, and whether one is set.
func (s Settings) eventData() map[string]any {
	b, _ := json.Marshal(s)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	delete(m, "secret")
	m["id"] = settingID
	m["secretSet"] = s.Secret != ""
	return m
}

// loadSettings reads the stored settings (the defaults when none are
// stored) with the secret opened, and their version (0: none stored).
func (svc *Service) loadSettings(q store.Q) (Settings, int64, error) {
	row, err := q.AuthSettings(settingsName)
	if apierr.IsKind(err, apierr.KindNotFound) {
		return DefaultSettings(), 0, nil
	}
	if err != nil {
		return Settings{}, 0, err
	}
	s := DefaultSettings()
	if err := json.Unmarshal([]byte(row.Document), &s); err != nil {
		return Settings{}, 0, apierr.Internal(err)
	}
	if s.Secret, err = svc.keys.open(row.Secret); err != nil {
		return Settings{}, 0, apierr.Unavailable("%s", err.Error())
	}
	// The id is what counts; the name is the role's current one (a custom
	// root role may have been renamed since).
	if r, err := q.Role(int64(s.DefaultRootRoleID)); err == nil {
		s.DefaultRootRole = r.Name
	} else if !apierr.IsKind(err, apierr.KindNotFound) {
		return Settings{}, 0, err
	}
	return s, row.Version, nil
}

// Settings returns the OIDC settings as p (UPDATE_AUTH_CONFIGURATION) may read them.
func (svc *Service) Settings(q store.Q, p *domain.Principal) (Settings, error) {
	if err := p.Require(domain.PermUpdateAuthConfiguration, "", ""); err != nil {
		return Settings{}, err
	}
	s, _, err := svc.loadSettings(q)
	return s, err
}

// UpdateSettings changes the OIDC settings as p (UPDATE_AUTH_CONFIGURATION) and writes the
// setting-created or setting-updated event in the same transaction. Every
// instance uses the new settings from its next sign-in on.
func (svc *Service) UpdateSettings(tx *store.Tx, p *domain.Principal, in SettingsInput) (Settings, error) {
	if err := p.Require(domain.PermUpdateAuthConfiguration, "", ""); err != nil {
		return Settings{}, err
	}
	return svc.updateSettings(tx, p.Actor(), in)
}

func (svc *Service) updateSettings(tx *store.Tx, actor store.Actor, in SettingsInput) (Settings, error) {
	old, version, err := svc.loadSettings(tx.Q)
	if err != nil {
		return Settings{}, err
	}
	s, err := in.apply(tx.Q, old)
	if err != nil {
		return Settings{}, err
	}
	if s == old && version > 0 {
		return s, nil
	}
	sealed, err := svc.keys.seal(s.Secret)
	if err != nil {
		return Settings{}, apierr.Validation("%s", err.Error())
	}
	doc := s
	doc.Secret = ""
	b, _ := json.Marshal(doc)
	if _, err := tx.PutAuthSettings(settingsName, string(b), sealed); err != nil {
		return Settings{}, err
	}
	ev := store.NewEvent{Type: "setting-updated", Actor: actor, Data: s.eventData(), PreData: old.eventData()}
	if version == 0 {
		ev = store.NewEvent{Type: "setting-created", Actor: actor, Data: s.eventData()}
	}
	if s.Secret != old.Secret {
		// A new secret alone still leaves a trace in the log.
		ev.Data.(map[string]any)["secretChanged"] = true
	}
	return s, tx.Event(ev)
}
