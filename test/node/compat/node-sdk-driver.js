// Drives the Node SDK (npm unleash-client) for Bunting's compatibility tests.
//
// Configuration comes from the environment: UNLEASH_URL (the upstream API
// URL, ending in /api), UNLEASH_API_TOKEN, APP_NAME, INSTANCE_ID.
//
// Protocol: one JSON object per line. The driver writes events
// ({"event":"ready"}, {"event":"error","message":...}, {"event":"sent"},
// {"event":"registered"}) and answers commands read from stdin:
//   {"id":1,"op":"evaluate","checks":[{"flag":"f","context":{...}}]}
//     -> {"id":1,"results":[{"flag":"f","enabled":true,"variant":{...}}]}
//   {"id":2,"op":"stop"} -> flushes metrics, answers {"id":2}, exits.
'use strict';

const readline = require('node:readline');
const { initialize, InMemStorageProvider } = require('unleash-client');

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

const unleash = initialize({
  url: requiredEnv('UNLEASH_URL'),
  appName: requiredEnv('APP_NAME'),
  instanceId: requiredEnv('INSTANCE_ID'),
  customHeaders: { Authorization: requiredEnv('UNLEASH_API_TOKEN') },
  refreshInterval: 1000,
  metricsInterval: 1000,
  storageProvider: new InMemStorageProvider(),
});

unleash.on('ready', () => emit({ event: 'ready' }));
unleash.on('error', (err) => emit({ event: 'error', message: String(err && err.message ? err.message : err) }));
unleash.on('warn', (msg) => emit({ event: 'warn', message: String(msg) }));
unleash.on('sent', () => emit({ event: 'sent' }));
unleash.on('registered', () => emit({ event: 'registered' }));

// toSdkContext maps the harness context ({userId, sessionId, properties})
// onto the SDK's context object.
function toSdkContext(ctx) {
  const out = { properties: {} };
  if (ctx && ctx.userId) out.userId = ctx.userId;
  if (ctx && ctx.sessionId) out.sessionId = ctx.sessionId;
  if (ctx && ctx.properties) Object.assign(out.properties, ctx.properties);
  return out;
}

function evaluate(checks) {
  return checks.map(({ flag, context }) => {
    const sdkContext = toSdkContext(context);
    const enabled = unleash.isEnabled(flag, sdkContext);
    const v = unleash.getVariant(flag, sdkContext);
    const variant = { name: v.name, enabled: v.enabled };
    if (v.payload) variant.payload = { type: v.payload.type, value: String(v.payload.value) };
    return { flag, enabled, variant };
  });
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
        emit({ id: cmd.id, results: evaluate(cmd.checks || []) });
        break;
      case 'stop':
        await unleash.destroyWithFlush();
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
  unleash.destroy();
  process.exit(0);
});
