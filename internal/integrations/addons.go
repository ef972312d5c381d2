package integrations

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"mime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cbroglie/mustache"

	"github.com/bunting-flags/bunting/internal/apierr"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/store"
)

// Event types the addon operations write.
const (
	EventAddonCreated = "addon-config-created"
	EventAddonUpdated = "addon-config-updated"
	EventAddonDeleted = "addon-config-deleted"
)

// Masked is what answers show instead of a set sensitive parameter; sent
// back in an update, it keeps the stored value (as in Unleash).
const Masked = "*****"

// AddonInput is the body of POST and PUT /api/admin/addons
// (addonCreateUpdateSchema). Parameter values may be strings, numbers or
// booleans. Empty events, projects or environments match everything.
type AddonInput struct {
	Provider     string         `json:"provider"`
	Description  *string        `json:"description"`
	Enabled      *bool          `json:"enabled"`
	Parameters   map[string]any `json:"parameters"`
	Events       []string       `json:"events"`
	Projects     []string       `json:"projects"`
	Environments []string       `json:"environments"`
}

// Addon is an integration as the API answers it (addonSchema), its
// sensitive parameters masked.
type Addon struct {
	ID           int64             `json:"id"`
	Provider     string            `json:"provider"`
	Description  *string           `json:"description"`
	Enabled      bool              `json:"enabled"`
	Parameters   map[string]string `json:"parameters"`
	Events       []string          `json:"events"`
	Projects     []string          `json:"projects"`
	Environments []string          `json:"environments"`
	CreatedAt    time.Time         `json:"createdAt"`
}

// addonEventData is what addon-config events record: the addon without
// its parameters (as Unleash).
func addonEventData(in store.Integration) map[string]any {
	return map[string]any{"id": in.ID, "provider": in.Provider, "description": in.Description, "enabled": in.Enabled,
		"events": in.Events, "projects": in.Projects, "environments": in.Environments, "createdAt": in.CreatedAt}
}

// view is the answer for a stored integration: plain parameters as they
// are, each set sensitive one masked.
func view(in store.Integration, sensitiveSet []string) Addon {
	params := map[string]string{}
	for k, v := range in.Parameters {
		params[k] = v
	}
	for _, k := range sensitiveSet {
		params[k] = Masked
	}
	return Addon{ID: in.ID, Provider: in.Provider, Description: in.Description, Enabled: in.Enabled, Parameters: params,
		Events: in.Events, Projects: in.Projects, Environments: in.Environments, CreatedAt: in.CreatedAt}
}

// secretNames lists the names of the secret parameters stored for in.
func (s *Service) secretNames(ctx context.Context, in store.Integration) ([]string, error) {
	secrets, err := s.secrets.open(ctx, in.Secrets)
	if err != nil {
		// The answer must not fail for it: mask what the definition says
		// may be secret.
		p, _ := provider(in.Provider)
		var names []string
		for _, d := range p.Parameters {
			if d.Sensitive {
				names = append(names, d.Name)
			}
		}
		return names, nil
	}
	names := make([]string, 0, len(secrets))
	for k := range secrets {
		names = append(names, k)
	}
	slices.Sort(names)
	return names, nil
}

// View answers one stored integration.
func (s *Service) View(ctx context.Context, in store.Integration) (Addon, error) {
	names, err := s.secretNames(ctx, in)
	if err != nil {
		return Addon{}, err
	}
	return view(in, names), nil
}

// List answers every integration.
func (s *Service) List(ctx context.Context) ([]Addon, error) {
	list, err := s.store.Q(ctx).Integrations()
	if err != nil {
		return nil, err
	}
	out := make([]Addon, 0, len(list))
	for _, in := range list {
		a, err := s.View(ctx, in)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// Get answers one integration, or NotFound.
func (s *Service) Get(ctx context.Context, id int64) (Addon, error) {
	in, err := s.store.Q(ctx).Integration(id)
	if err != nil {
		return Addon{}, err
	}
	return s.View(ctx, in)
}

// parameterText turns a parameter value into its stored text.
func parameterText(name string, v any) (string, error) {
	switch x := v.(type) {
	case nil:
		return "", nil
	case string:
		return x, nil
	case bool:
		return strconv.FormatBool(x), nil
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64), nil
	case json.Number:
		return x.String(), nil
	}
	return "", apierr.Validation("The `parameters.%s` value must be a string, a number or a boolean.", name)
}

// prepared is a validated input: the integration to store and the
// parameters to seal.
type prepared struct {
	in      store.Integration
	secrets map[string]string
	// generated is a signing secret made here, shown once in the answer.
	generated string
}

// prepare validates in for provider def. old is the stored integration of
// an update (nil on create): a sensitive parameter sent as Masked, or left
// out, keeps its value there.
func (s *Service) prepare(ctx context.Context, in AddonInput, old *store.Integration, oldSecrets map[string]string) (prepared, error) {
	var out prepared
	if in.Provider == "" {
		return out, apierr.Validation("The `provider` property is required: one of %s.", providerNames())
	}
	def, ok := provider(in.Provider)
	if !ok {
		return out, apierr.Validation("Unknown addon provider %q: use one of %s.", in.Provider, providerNames())
	}
	if old != nil && old.Provider != in.Provider {
		return out, apierr.Validation("The provider of addon %d is %s; it cannot become %s (create a new addon instead).", old.ID, old.Provider, in.Provider)
	}
	if in.Description != nil && len(*in.Description) > 1000 {
		return out, apierr.Validation("The `description` property must be at most 1000 characters long.")
	}
	plain, secrets := map[string]string{}, map[string]string{}
	for name, raw := range in.Parameters {
		d, ok := def.parameter(name)
		if !ok {
			return out, apierr.Validation("The %s provider has no parameter %q; its parameters are %s.", def.Name, name, parameterNames(def))
		}
		v, err := parameterText(name, raw)
		if err != nil {
			return out, err
		}
		if len(v) > 64<<10 {
			return out, apierr.Validation("The `parameters.%s` value must be at most 64 kB.", name)
		}
		switch {
		case d.Sensitive && v == Masked:
			if prev, ok := oldSecrets[name]; ok {
				secrets[name] = prev
			}
		case v == "":
		case d.Sensitive:
			secrets[name] = v
		default:
			plain[name] = v
		}
	}
	if old != nil {
		// A secret left out keeps its value: answers never carry it, so a
		// client cannot send it back.
		for name, v := range oldSecrets {
			if _, sent := in.Parameters[name]; !sent {
				secrets[name] = v
			}
		}
	}
	value := func(name string) string {
		if v, ok := plain[name]; ok {
			return v
		}
		return secrets[name]
	}
	for _, d := range def.Parameters {
		if d.Required && value(d.Name) == "" {
			return out, apierr.Validation("Missing required parameter `parameters.%s` (%s) for the %s provider.", d.Name, d.DisplayName, def.Name)
		}
	}
	if u := value("url"); u != "" {
		if err := s.targets.validateURL(ctx, "parameters.url", u); err != nil {
			return out, err
		}
	}
	if ct := value("contentType"); ct != "" {
		if _, _, err := mime.ParseMediaType(ct); err != nil {
			return out, apierr.Validation("The `parameters.contentType` value %q is not a media type (for example application/json).", ct)
		}
	}
	if h := value("customHeaders"); h != "" {
		if _, err := parseHeaders(h); err != nil {
			return out, apierr.Validation("The `parameters.customHeaders` value is refused: %s.", err.Error())
		}
	}
	if t := value("bodyTemplate"); t != "" {
		if _, err := parseTemplate(t); err != nil {
			return out, apierr.Validation("The `parameters.bodyTemplate` value is not a valid Mustache template: %s.", err.Error())
		}
	}
	if site := value("site"); site != "" {
		if _, ok := datadogSites[site]; !ok {
			return out, apierr.Validation("The `parameters.site` value %q is not a Datadog site: use one of datadoghq.com, us3.datadoghq.com, us5.datadoghq.com, datadoghq.eu, ap1.datadoghq.com, ap2.datadoghq.com, ddog-gov.com, us2.ddog-gov.com.", site)
		}
	}
	if def.Name == ProviderWebhook {
		if sec := secrets["signingSecret"]; sec != "" {
			if _, err := signingKey(sec); err != nil {
				return out, apierr.Validation("The `parameters.signingSecret` value is refused: %s.", err.Error())
			}
		} else {
			out.generated = newSigningSecret()
			secrets["signingSecret"] = out.generated
		}
	}
	lists := [3][]string{in.Events, in.Projects, in.Environments}
	if old != nil {
		for i, prev := range [3][]string{old.Events, old.Projects, old.Environments} {
			if lists[i] == nil {
				lists[i] = prev
			}
		}
	}
	for i, field := range []string{"events", "projects", "environments"} {
		l, err := cleanList(field, lists[i])
		if err != nil {
			return out, err
		}
		lists[i] = l
	}
	for _, e := range lists[0] {
		if !domain.IsEventType(e) {
			return out, apierr.Validation("The `events` property lists %q, which is not an event type; the %s provider suggests %s.", e, def.Name, strings.Join(def.Events, ", "))
		}
	}
	out.in = store.Integration{Provider: def.Name, Description: in.Description, Enabled: in.Enabled == nil || *in.Enabled,
		Parameters: plain, Events: lists[0], Projects: lists[1], Environments: lists[2]}
	if old != nil {
		out.in.ID, out.in.CreatedAt = old.ID, old.CreatedAt
		if in.Enabled == nil {
			out.in.Enabled = old.Enabled
		}
	}
	out.secrets = secrets
	return out, nil
}

// cleanList trims a filter list's items, drops duplicates and refuses
// empty or overlong ones.
func cleanList(field string, l []string) ([]string, error) {
	out := []string{}
	if len(l) > 500 {
		return nil, apierr.Validation("The `%s` property may list at most 500 items.", field)
	}
	for _, v := range l {
		v = strings.TrimSpace(v)
		if v == "" || len(v) > 200 {
			return nil, apierr.Validation("The `%s` property lists an empty or overlong (over 200 characters) item.", field)
		}
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out, nil
}

func providerNames() string {
	names := make([]string, len(providers))
	for i, p := range providers {
		names[i] = p.Name
	}
	return strings.Join(names, ", ")
}

func parameterNames(p ProviderDefinition) string {
	names := make([]string, len(p.Parameters))
	for i, d := range p.Parameters {
		names[i] = d.Name
	}
	return strings.Join(names, ", ")
}

// Create validates in and stores a new integration as p (CREATE_ADDON) with its
// addon-config-created event. The answer shows a signing secret that was
// generated here, this once.
func (s *Service) Create(ctx context.Context, p *domain.Principal, in AddonInput) (Addon, error) {
	if err := p.Require(domain.PermCreateAddon, "", ""); err != nil {
		return Addon{}, err
	}
	pr, err := s.prepare(ctx, in, nil, nil)
	if err != nil {
		return Addon{}, err
	}
	if pr.in.Secrets, err = s.secrets.seal(ctx, pr.secrets); err != nil {
		return Addon{}, err
	}
	err = s.store.Tx(ctx, func(tx *store.Tx) error {
		pr.in.CreatedAt = tx.Now()
		id, err := tx.InsertIntegration(pr.in)
		if err != nil {
			return err
		}
		pr.in.ID = id
		return tx.Event(store.NewEvent{Type: EventAddonCreated, Actor: p.Actor(), Data: addonEventData(pr.in)})
	})
	if err != nil {
		return Addon{}, err
	}
	a := view(pr.in, sortedKeys(pr.secrets))
	if pr.generated != "" {
		a.Parameters["signingSecret"] = pr.generated
	}
	return a, nil
}

// Update validates in and replaces integration id's configuration as p
// (UPDATE_ADDON) with its addon-config-updated event.
func (s *Service) Update(ctx context.Context, p *domain.Principal, id int64, in AddonInput) (Addon, error) {
	if err := p.Require(domain.PermUpdateAddon, "", ""); err != nil {
		return Addon{}, err
	}
	old, err := s.store.Q(ctx).Integration(id)
	if err != nil {
		return Addon{}, err
	}
	oldSecrets, err := s.secrets.open(ctx, old.Secrets)
	if err != nil {
		return Addon{}, apierr.Unavailable("The stored secrets of addon %d cannot be read: %s", id, err.Error())
	}
	pr, err := s.prepare(ctx, in, &old, oldSecrets)
	if err != nil {
		return Addon{}, err
	}
	if pr.in.Secrets, err = s.secrets.seal(ctx, pr.secrets); err != nil {
		return Addon{}, err
	}
	err = s.store.Tx(ctx, func(tx *store.Tx) error {
		if err := tx.UpdateIntegration(pr.in); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: EventAddonUpdated, Actor: p.Actor(), Data: addonEventData(pr.in), PreData: addonEventData(old)})
	})
	if err != nil {
		return Addon{}, err
	}
	s.notify()
	a := view(pr.in, sortedKeys(pr.secrets))
	if pr.generated != "" {
		a.Parameters["signingSecret"] = pr.generated
	}
	return a, nil
}

// Delete removes integration id with its outbox and delivery log as p
// (DELETE_ADDON), with its addon-config-deleted event.
func (s *Service) Delete(ctx context.Context, p *domain.Principal, id int64) error {
	if err := p.Require(domain.PermDeleteAddon, "", ""); err != nil {
		return err
	}
	return s.store.Tx(ctx, func(tx *store.Tx) error {
		old, err := tx.Integration(id)
		if err != nil {
			return err
		}
		if err := tx.DeleteIntegration(id); err != nil {
			return err
		}
		return tx.Event(store.NewEvent{Type: EventAddonDeleted, Actor: p.Actor(), PreData: addonEventData(old)})
	})
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// parseTemplate compiles a body template. Partials ({{> name}}) resolve
// to nothing: the library's default reads them from files.
func parseTemplate(t string) (*mustache.Template, error) {
	return mustache.ParseStringPartials(t, &mustache.StaticProvider{Partials: map[string]string{}})
}

// newSigningSecret makes a Standard Webhooks secret: whsec_ and 32 random
// bytes in base64.
func newSigningSecret() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b)
	return "whsec_" + base64.StdEncoding.EncodeToString(b)
}
