// Drives the real browser SDK (unleash-proxy-client) against Bunting's
// frontend API. Usage: node frontend.js <url of /api/frontend> <frontend token>.
// Prints one JSON line with what the SDK evaluated, then SENT once its
// metrics were posted.
'use strict';
const { UnleashClient, EVENTS } = require('unleash-proxy-client');

const [url, clientKey] = process.argv.slice(2);
setTimeout(() => { console.log('FAIL timed out'); process.exit(1); }, 20000).unref();

const client = new UnleashClient({
  url, clientKey, appName: 'frontend-sdk-test',
  refreshInterval: 60, metricsInterval: 1, metricsIntervalInitial: 1, usePOSTrequests: process.env.USE_POST === '1',
});
client.updateContext({ userId: 'u1' });
client.on(EVENTS.ERROR, (e) => console.error('sdk error', JSON.stringify(e)));
client.on(EVENTS.READY, () => {
  console.log(JSON.stringify({
    flagOn: client.isEnabled('flag-on'),
    variant: client.getVariant('flag-on').name,
    segment: client.isEnabled('flag-segment'),
    child: client.isEnabled('flag-child'),
    off: client.isEnabled('flag-off'),
  }));
});
client.on(EVENTS.SENT, () => {
  console.log('SENT');
  client.stop();
  process.exit(0);
});
client.start();
