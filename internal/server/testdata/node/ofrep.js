// Evaluates Bunting server's flags through OpenFeature's Node server SDK
// with its generic OFREP provider (@openfeature/ofrep-provider), a
// frontend token as a bearer token, and prints one JSON line of details.
// Usage: node ofrep.js <server URL> <frontend token>
const { OpenFeature } = require('@openfeature/server-sdk');
const { OFREPProvider } = require('@openfeature/ofrep-provider');

const [baseUrl, token] = process.argv.slice(2);

(async () => {
  await OpenFeature.setProviderAndWait(new OFREPProvider({ baseUrl, headers: [['Authorization', `Bearer ${token}`]] }));
  const client = OpenFeature.getClient();
  const ctx = { targetingKey: 'user-1', plan: 'pro', age: 42 };
  const pick = (d) => ({ value: d.value, variant: d.variant, reason: d.reason, errorCode: d.errorCode, flagMetadata: d.flagMetadata });
  const out = {
    bool: pick(await client.getBooleanDetails('of-bool', false, ctx)),
    targetedPro: pick(await client.getBooleanDetails('of-targeted', false, ctx)),
    targetedFree: pick(await client.getBooleanDetails('of-targeted', true, { targetingKey: 'user-2', plan: 'free' })),
    string: pick(await client.getStringDetails('of-string', 'none', ctx)),
    number: pick(await client.getNumberDetails('of-number', 0, ctx)),
    object: pick(await client.getObjectDetails('of-object', {}, ctx)),
    off: pick(await client.getStringDetails('of-off', 'fallback', ctx)),
    unknown: pick(await client.getStringDetails('of-unknown', 'fallback', ctx)),
    mismatch: pick(await client.getBooleanDetails('of-string', true, ctx)),
  };
  console.log(JSON.stringify(out));
  await OpenFeature.close();
})().catch((e) => {
  console.error(e);
  process.exit(1);
});
