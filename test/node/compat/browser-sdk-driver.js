// Drives the browser SDK (npm unleash-proxy-client) under Node for Bunting's
// compatibility tests, with the same line protocol as node-sdk-driver.js.
//
// Configuration comes from the environment: PROXY_URL (the proxy endpoint,
// ending in /proxy), CLIENT_KEY, APP_NAME. Each "evaluate" command sets the
// SDK's context with updateContext, which fetches from the proxy, at its
// start and whenever a check's context differs from the previous one, then
// answers isEnabled and getVariant from what the SDK holds. Periodic refresh
// is off: a timed fetch still in flight with the previous context could
// otherwise land after updateContext's and leave the SDK holding the toggles
// of the wrong context (the SDK's own race, seen with the reference proxy).
'use strict';

const readline = require('node:readline');
const { UnleashClient, EVENTS } = require('unleash-proxy-client');

function emit(message) {
  process.stdout.write(JSON.stringify(message) + '\n');
}

function requiredEnv(name) {
  const value = process.env[name];
  if (!value) {
    emit({ event: 'error', message: `environment variable ${name} is not set` });
    process.exit(2);
  }
  return value;
}

const client = new UnleashClient({
  url: requiredEnv('PROXY_URL'),
  clientKey: requiredEnv('CLIENT_KEY'),
  appName: requiredEnv('APP_NAME'),
  disableRefresh: true,
  metricsInterval: 1,
  metricsIntervalInitial: 1,
});

client.on(EVENTS.READY, () => emit({ event: 'ready' }));
client.on(EVENTS.ERROR, (err) => emit({ event: 'error', message: JSON.stringify(err) }));
client.on(EVENTS.SENT, () => emit({ event: 'sent' }));

// toSdkContext maps the harness context ({userId, sessionId, properties})
// onto the browser SDK's context.
function toSdkContext(ctx) {
  const out = { properties: {} };
  if (ctx && ctx.userId) out.userId = ctx.userId;
  if (ctx && ctx.sessionId) out.sessionId = ctx.sessionId;
  if (ctx && ctx.properties) Object.assign(out.properties, ctx.properties);
  return out;
}

async function evaluate(checks) {
  const results = [];
  let currentContext = null;
  for (const { flag, context } of checks) {
    const key = JSON.stringify(toSdkContext(context));
    if (key !== currentContext) {
      await client.updateContext(toSdkContext(context));
      currentContext = key;
    }
    const enabled = client.isEnabled(flag);
    const v = client.getVariant(flag);
    const variant = { name: v.name, enabled: v.enabled };
    if (v.payload) variant.payload = { type: v.payload.type, value: String(v.payload.value) };
    results.push({ flag, enabled, variant });
  }
  return results;
}

const lines = readline.createInterface({ input: process.stdin });
lines.on('line', async (line) => {
  let cmd;
  try {
    cmd = JSON.parse(line);
  } catch (err) {
    emit({ event: 'error', message: `bad command ${line}: ${err.message}` });
    return;
  }
  try {
    switch (cmd.op) {
      case 'evaluate':
        emit({ id: cmd.id, results: await evaluate(cmd.checks || []) });
        break;
      case 'stop':
        await client.sendMetrics();
        client.stop();
        emit({ id: cmd.id });
        process.exit(0);
        break;
      default:
        emit({ id: cmd.id, error: `unknown op ${cmd.op}` });
    }
  } catch (err) {
    emit({ id: cmd.id, error: String(err && err.stack ? err.stack : err) });
  }
});
lines.on('close', () => {
  client.stop();
  process.exit(0);
});

client.start();
