// Evaluates flags with the reference Node SDK (unleash-client) for the
// engine's differential test (engine/node_oracle_test.go).
//
// Usage: node node-oracle.js <api-url>, with {"flags": [...], "contexts":
// [...]} on stdin; prints [[isEnabled, variantName, variantEnabled,
// featureEnabled, payloadValue|null] per flag] per context as JSON.
'use strict';
const path = require('path');
const modules = process.env.BUNTING_NODE_MODULES;
const { Unleash, InMemStorageProvider } = require(path.join(modules, 'unleash-client'));

const url = process.argv[2];
let input = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (chunk) => { input += chunk; });
process.stdin.on('end', () => {
  const { flags, contexts } = JSON.parse(input);
  const unleash = new Unleash({
    url,
    appName: 'bunting-oracle',
    instanceId: 'oracle',
    disableMetrics: true,
    refreshInterval: 60_000,
    storageProvider: new InMemStorageProvider(),
  });
  const timer = setTimeout(() => { console.error('no payload within 10s'); process.exit(2); }, 10_000);
  unleash.on('error', (err) => { console.error(String(err)); });
  unleash.on('synchronized', () => {
    clearTimeout(timer);
    const out = contexts.map((ctx) => flags.map((name) => {
      const v = unleash.getVariant(name, ctx);
      return [unleash.isEnabled(name, ctx), v.name, v.enabled, v.feature_enabled, v.payload ? v.payload.value : null];
    }));
    process.stdout.write(JSON.stringify(out), () => {
      unleash.destroy();
      process.exit(0);
    });
  });
});
