// Drives the real Node server SDK (unleash-client) against a running
// Bunting proxy's /proxy/client/features with a server-side SDK token
// (expServerSideSdkConfig.tokens). The Go test TestNodeServerSDK reads
// stdout: OK on success, FAIL <reason> otherwise.
'use strict';
const { initialize } = require('unleash-client');

function fail(msg) {
  console.log('FAIL ' + msg);
  process.exit(1);
}
setTimeout(() => fail('timed out'), 20000); // also keeps Node running: the SDK's timers are unref'd

const client = initialize({
  url: process.env.PROXY_URL,
  appName: 'node-server-sdk',
  customHeaders: { Authorization: process.env.SERVER_TOKEN },
  refreshInterval: 1000,
  metricsInterval: 500,
});
client.on('error', (e) => console.error('sdk error', e && e.message));
client.on('synchronized', () => {
  if (!client.isEnabled('segment-flag', { userId: 'vip' })) fail('segment-flag should be on for a segment member');
  if (client.isEnabled('segment-flag', { userId: 'other' })) fail('segment-flag should be off outside the segment');
  if (!client.isEnabled('plain')) fail('plain should be on');
  client.isEnabled('node-sdk-only');
  client.once('sent', () => {
    console.log('OK');
    client.destroy();
    process.exit(0);
  });
});
