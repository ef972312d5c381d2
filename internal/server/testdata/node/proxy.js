// Runs the reference Node proxy (@unleash/proxy) with a Bunting server as
// its upstream, on the given port.
const { createApp } = require('@unleash/proxy');

const [url, token, port] = process.argv.slice(2);
const app = createApp({
  unleashUrl: url,
  unleashApiToken: token,
  clientKeys: ['proxy-client-key'],
  refreshInterval: 200,
  metricsInterval: 500,
  logLevel: 'error',
  enableAllEndpoint: true,
});
app.listen(Number(port), '127.0.0.1', () => console.log('listening'));
