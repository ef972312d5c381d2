// Runs the reference Node proxy (@unleash/proxy) with a Bunting server as
// its upstream, on the given port.
const { createApp } = require('@unleash/proxy');

const [url, token, port] = process.argv.slice(2);

// Keep the flag cache in memory: the default file backup in the temp
// directory would serve a previous run's flags before the first sync.
const memory = new Map();
const storageProvider = {
  async set(key, value) { memory.set(key, value); },
  async get(key) { return memory.get(key); },
};
const app = createApp({
  unleashUrl: url,
  unleashApiToken: token,
  clientKeys: ['proxy-client-key'],
  refreshInterval: 200,
  metricsInterval: 500,
  logLevel: 'error',
  enableAllEndpoint: true,
  storageProvider,
});
app.listen(Number(port), '127.0.0.1', () => console.log('listening'));
