// Drives the official Node SDK (unleash-client) against a Bunting server:
// waits for the first sync, prints the evaluations as one JSON line, then
// waits until one metrics report was sent and exits.
const { initialize, InMemStorageProvider } = require('unleash-client');

const [url, token] = process.argv.slice(2);
const client = initialize({
  url,
  appName: 'bunting-node-sdk-test',
  instanceId: 'node-1',
  refreshInterval: 200,
  metricsInterval: 300,
  disableAutoStart: false,
  customHeaders: { Authorization: token },
  // No file backup: a previous run's flags must never be evaluated here.
  storageProvider: new InMemStorageProvider(),
});

const fail = (msg) => { console.error(msg); process.exit(1); };
const timer = setTimeout(() => fail('timed out'), 15000);
client.on('error', (err) => fail('sdk error: ' + (err && err.message)));

client.on('synchronized', () => {
  const ctx = { userId: 'u1', appName: 'mobile-app' };
  const out = {
    on: client.isEnabled('flag-on', ctx),
    off: client.isEnabled('flag-off', ctx),
    segmented: client.isEnabled('flag-segment', ctx),
    segmentedOther: client.isEnabled('flag-segment', { userId: 'u2' }),
    variant: client.getVariant('flag-on', ctx).name,
    child: client.isEnabled('flag-child', ctx),
  };
  console.log(JSON.stringify(out));
  client.once('sent', () => {
    clearTimeout(timer);
    client.destroy();
    process.exit(0);
  });
});
