// Drives the real browser SDK (unleash-proxy-client) against a running
// Bunting proxy. The Go test TestBrowserSDK starts the proxy and reads
// this script's stdout: READY (then it changes upstream), UPDATED, SENT.
// Any failed check prints FAIL and exits 1.
'use strict';
const { UnleashClient, EVENTS } = require('unleash-proxy-client');

const url = process.env.PROXY_URL;
const clientKey = process.env.CLIENT_KEY;
const usePOST = process.env.USE_POST === '1';

function fail(msg) {
  console.log('FAIL ' + msg);
  process.exit(1);
}
function check(cond, msg) {
  if (!cond) fail(msg);
}

setTimeout(() => fail('timed out'), 20000).unref();

const client = new UnleashClient({
  url,
  clientKey,
  appName: 'browser-sdk-test',
  refreshInterval: 1,
  metricsInterval: 1,
  metricsIntervalInitial: 1,
  usePOSTrequests: usePOST,
});
client.updateContext({ userId: 'u1', properties: { region: 'eu' } });

let phase = 'start';
client.on(EVENTS.ERROR, (e) => console.error('sdk error', JSON.stringify(e)));
client.on(EVENTS.READY, () => {
  check(client.isEnabled('enabled-simple'), 'enabled-simple should be on');
  check(!client.isEnabled('disabled-flag'), 'disabled-flag should be off');
  // The proxy drops the SDK's count of a name it does not serve.
  check(!client.isEnabled('sdk-only-name'), 'an unknown name is off');
  check(client.isEnabled('user-only'), 'user-only should be on for u1');
  check(client.isEnabled('region-eu'), 'region-eu should be on for properties.region=eu');
  const v = client.getVariant('with-variant');
  check(v.name === 'blue' && v.enabled === true, 'variant blue expected, got ' + JSON.stringify(v));
  check(v.payload && v.payload.type === 'json' && JSON.parse(v.payload.value).color === 'blue', 'json payload expected');
  const d = client.getVariant('enabled-simple');
  check(d.name === 'disabled' && d.enabled === false, 'fallback variant expected, got ' + JSON.stringify(d));
  const ud = client.getVariant('user-named-disabled');
  check(ud.name === 'disabled' && ud.enabled === true, 'user variant named disabled is enabled');
  phase = 'ready';
  console.log('READY');
});
client.on(EVENTS.UPDATE, () => {
  if (phase === 'ready' && client.isEnabled('from-bootstrap')) {
    check(!client.isEnabled('enabled-simple'), 'enabled-simple is gone after the change');
    phase = 'updated';
    console.log('UPDATED');
  }
});
client.on(EVENTS.SENT, () => {
  if (phase === 'updated') {
    console.log('SENT');
    client.stop();
    process.exit(0);
  }
});
client.start();
