// Package ofrep serves the OpenFeature Remote Evaluation Protocol (OFREP,
// open-feature/protocol service/openapi.yaml, 0.3) over Bunting's engine,
// so that any OpenFeature SDK's generic OFREP provider evaluates Bunting's
// flags. The proxy and the server each mount one Handler with their own
// credentials, snapshots and context completion (see Options):
//
//	POST {base}/v1/evaluate/flags        every flag for one context (ETag, 304)
//	POST {base}/v1/evaluate/flags/{key}  one flag
//	GET  {base}/v1/events?c=…            change notifications (OFREP's SSE extension)
//
// Mapping from Bunting's model (docs/openfeature.md has the table):
//
//   - a flag without variants: value is the boolean result, variant
//     "enabled" or "disabled"; reason DISABLED when the flag is off in the
//     environment, TARGETING_MATCH when a strategy with constraints or
//     segments decided it (for an off result: when the flag has such a
//     strategy or a dependency), STATIC otherwise;
//   - a flag with variants: value is the chosen variant's payload decoded
//     by its type (string, number, json; csv stays a string), or the
//     variant's name without a payload; variant is its name; reason SPLIT;
//     metadata carries enabled and payloadType;
//   - a flag with variants that is off: no value and no variant (the SDK
//     uses the caller's default), reason DISABLED;
//   - an unknown flag: 404 FLAG_NOT_FOUND (single); absent from bulk.
//
// A payload that does not decode as its type (a number payload that is not
// a number, a json payload that is not JSON) is that flag's PARSE_ERROR.
package ofrep
