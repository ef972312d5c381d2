// Drives the official Node SDK (unleash-client) in one of its experimental
// modes against a Bunting server: prints one JSON line with the SDK's mode
// and flags every time its flags change or its mode switches, until killed.
// Usage: node stream-sdk.js <url> <token> streaming|delta
const { initialize, InMemStorageProvider } = require('unleash-client');

const [url, token, mode] = process.argv.slice(2);
const client = initialize({
  url,
  appName: 'bunting-stream-test',
  instanceId: 'node-stream-1',
  refreshInterval: 200,
  disableMetrics: true,
  customHeaders: { Authorization: token },
  storageProvider: new InMemStorageProvider(),
  experimentalMode: mode === 'streaming' ? { type: 'streaming' } : { type: 'polling', format: 'delta' },
});

const print = (why) => {
  const flags = {};
  for (const t of client.getFeatureToggleDefinitions()) {
    flags[t.name] = { enabled: t.enabled, u1: client.isEnabled(t.name, { userId: 'u1' }) };
  }
  console.log(JSON.stringify({ why, mode: client.repository.getMode(), flags, at: Date.now() }));
};
client.on('error', (err) => console.error('sdk error: ' + (err && err.message)));
client.on('warn', (msg) => console.error('sdk warning: ' + msg));
client.on('changed', () => print('changed'));
client.on('mode', () => print('mode'));
process.stdin.on('end', () => { client.destroy(); process.exit(0); });
process.stdin.resume();
