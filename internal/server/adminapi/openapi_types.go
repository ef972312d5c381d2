package adminapi

import (
	"time"

	"github.com/bunting-flags/bunting/engine"
	"github.com/bunting-flags/bunting/internal/domain"
	"github.com/bunting-flags/bunting/internal/signals"
	"github.com/bunting-flags/bunting/internal/store"
)

// The JSON objects that handlers build in place around lists (maps), named
// for the OpenAPI document: routes_*.go give them as response types. A test
// (TestOpenAPIResponsesMatchSchemas) checks real answers against them.
type (
	featureTypeList struct {
		Version int                 `json:"version"`
		Types   []store.FeatureType `json:"types"`
	}
	featureEventList struct {
		Version     int           `json:"version"`
		ToggleName  string        `json:"toggleName"`
		Events      []store.Event `json:"events"`
		TotalEvents int           `json:"totalEvents"`
	}
	projectList struct {
		Version  int           `json:"version"`
		Projects []projectView `json:"projects"`
	}
	projectDetails struct {
		store.Project
		Environments []string `json:"environments"`
	}
	environmentList struct {
		Version      int               `json:"version"`
		Environments []environmentView `json:"environments"`
	}
	featureList struct {
		Version  int                  `json:"version"`
		Features []domain.FeatureView `json:"features"`
	}
	archivedFeatureList struct {
		Version  int             `json:"version"`
		Features []store.Feature `json:"features"`
	}
	featureEnvironmentDetails struct {
		Name        string           `json:"name"`
		Environment string           `json:"environment"`
		Enabled     bool             `json:"enabled"`
		Strategies  []store.Strategy `json:"strategies"`
		Variants    []engine.Variant `json:"variants"`
	}
	variantList struct {
		Version  int              `json:"version"`
		Variants []engine.Variant `json:"variants"`
	}
	segmentList struct {
		Segments []store.Segment `json:"segments"`
	}
	apiTokenList struct {
		Tokens []domain.TokenView `json:"tokens"`
	}
	featureUsageReport struct {
		Version      int                   `json:"version"`
		Maturity     string                `json:"maturity"`
		FeatureName  string                `json:"featureName"`
		LastSeenAt   *time.Time            `json:"lastSeenAt"`
		Environments map[string]*time.Time `json:"environments"`
		Data         []store.UsageRow      `json:"data"`
	}
	strategyTypeList struct {
		Version    int                  `json:"version"`
		Strategies []store.StrategyType `json:"strategies"`
	}
	personalTokenList struct {
		PATs []store.UserToken `json:"pats"`
	}
	serviceAccountList struct {
		ServiceAccounts []domain.ServiceAccountView `json:"serviceAccounts"`
		RootRoles       []domain.RootRole           `json:"rootRoles"`
	}
	tagTypeList struct {
		Version  int             `json:"version"`
		TagTypes []store.TagType `json:"tagTypes"`
	}
	tagTypeDetails struct {
		Version int           `json:"version"`
		TagType store.TagType `json:"tagType"`
	}
	tagList struct {
		Version int         `json:"version"`
		Tags    []store.Tag `json:"tags"`
	}
	tagDetails struct {
		Version int       `json:"version"`
		Tag     store.Tag `json:"tag"`
	}
	contextFieldName struct {
		Name string `json:"name"`
	}
	featureSearchResult struct {
		Features     []store.FeatureSearchHit `json:"features"`
		Total        int                      `json:"total"`
		Environments []store.Environment      `json:"environments"`
		Projects     []struct {
			ID   string `json:"id"`
			Name string `json:"name"`
		} `json:"projects"`
		Types []store.FeatureType `json:"types"`
	}
	signalEndpointList struct {
		SignalEndpoints []store.SignalEndpoint `json:"signalEndpoints"`
	}
	signalEndpointTokenList struct {
		SignalEndpointTokens []store.SignalEndpointToken `json:"signalEndpointTokens"`
	}
	endpointSignalList struct {
		SignalEndpointSignals []store.Signal `json:"signalEndpointSignals"`
	}
	signalList struct {
		Signals []store.Signal `json:"signals"`
		Total   int            `json:"total"`
	}
	ingestedSignals struct {
		Signals []store.Signal `json:"signals"`
	}
	actionSetList struct {
		Actions []store.ActionSet `json:"actions"`
	}
	actionSetEventList struct {
		ActionSetEvents []store.ActionSetEvent `json:"actionSetEvents"`
	}
)

// The signal routes' request and response types.
type (
	signalEndpointBody = domain.SignalEndpointInput
	signalEndpointView = signals.EndpointView
	signalTokenBody    = domain.SignalTokenInput
	signalTokenCreated = domain.CreatedSignalToken
	actionSetBody      = domain.ActionSetInput
	actionTypes        = map[string]domain.ActionDefinition
)
