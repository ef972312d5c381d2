// Drives the Node SDK (npm unleash-client) for Bunting's compatibility tests.
//
// Configuration comes from the environment: UNLEASH_URL (the upstream API
// URL, ending in /api), UNLEASH_API_TOKEN, APP_NAME, INSTANCE_ID, and
// DISABLE_METRICS=1 to send no metrics.
//
// Protocol: one JSON object per line. The driver writes events
// ({"event":"ready"}, {"event":"error","message":...}, {"event":"sent"},
// {"event":"registered"}) and answers commands read from stdin:
//   {"id":1,"op":"evaluate","checks":[{"flag":"f","context":{...}}]}
//     -> {"id":1,"results":[{"flag":"f","enabled":true,"variant":{...}}]}
//   "op":"evaluate-seeded" is the same, with Math.random (which the SDK
//   uses for random stickiness) replaced, for each isEnabled and each
//   getVariant, by a generator seeded with the check's index: two drivers
//   given the same flags and checks make the same "random" choices. Each
//   result then also says how many of those numbers were drawn while the
//   SDK evaluated a parent of the flag ("parentDraws"): a payload that
//   repeats a dependency makes the SDK draw the parent's random choices
//   once per repeat, which changes the answer by chance alone.
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
  disableMetrics: process.env.DISABLE_METRICS === '1',
  storageProvider: new InMemStorageProvider(),
});

unleash.on('ready', () => emit({ event: 'ready' }));
unleash.on('error', (err) => emit({ event: 'error', message: String(err && err.message ? err.message : err) }));
unleash.on('warn', (msg) => emit({ event: 'warn', message: String(msg) }));
unleash.on('sent', () => emit({ event: 'sent' }));
unleash.on('registered', () => emit({ event: 'registered' }));

// toSdkContext maps the harness context ({userId, sessionId,
// remoteAddress, appName, environment, currentTime, properties}) onto the
// SDK's context object.
function toSdkContext(ctx) {
  const out = { properties: {} };
  for (const key of ['userId', 'sessionId', 'remoteAddress', 'appName', 'environment', 'currentTime']) {
    if (ctx && ctx[key]) out[key] = ctx[key];
  }
  if (ctx && ctx.properties) Object.assign(out.properties, ctx.properties);
  return out;
}

// mulberry32 is a small seeded generator of numbers in [0, 1).
function mulberry32(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const systemRandom = Math.random;

// depth is how deep the SDK's own isEnabled and getVariant calls are
// nested: 1 for the flag checked, more while it evaluates a parent.
let depth = 0;
for (const method of ['isEnabled', 'getVariant']) {
  const original = unleash.client[method].bind(unleash.client);
  unleash.client[method] = (...args) => {
    depth++;
    try {
      return original(...args);
    } finally {
      depth--;
    }
  };
}

// parentDraws counts the numbers the seeded generators gave while a parent
// was evaluated.
let parentDraws = 0;

// withRandom runs fn with Math.random seeded by seed (when seed is a number).
function withRandom(seed, fn) {
  if (typeof seed !== 'number') return fn();
  const next = mulberry32(seed);
  Math.random = () => {
    if (depth > 1) parentDraws++;
    return next();
  };
  try {
    return fn();
  } finally {
    Math.random = systemRandom;
  }
}

function evaluate(checks, seeded) {
  return checks.map(({ flag, context }, i) => {
    const sdkContext = toSdkContext(context);
    const seed = seeded ? i + 1 : undefined;
    parentDraws = 0;
    const enabled = withRandom(seed, () => unleash.isEnabled(flag, sdkContext));
    const v = withRandom(seed, () => unleash.getVariant(flag, sdkContext));
    const variant = { name: v.name, enabled: v.enabled };
    if (v.payload) variant.payload = { type: v.payload.type, value: String(v.payload.value) };
    const result = { flag, enabled, variant };
    if (seeded) result.parentDraws = parentDraws;
    return result;
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
      case 'evaluate-seeded':
        emit({ id: cmd.id, results: evaluate(cmd.checks || [], cmd.op === 'evaluate-seeded') });
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
