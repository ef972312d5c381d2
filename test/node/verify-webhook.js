// Verifies Standard Webhooks signatures with the published library
// (npm standardwebhooks), for Bunting's integration tests. Reads one JSON
// object per line on stdin: {secret, headers, body} (body as text) and
// writes one per line on stdout: {ok: true} or {ok: false, error}.
const { Webhook } = require('standardwebhooks');
const readline = require('readline');

const rl = readline.createInterface({ input: process.stdin });
rl.on('line', (line) => {
    let out;
    try {
        const { secret, headers, body } = JSON.parse(line);
        new Webhook(secret).verify(body, headers);
        out = { ok: true };
    } catch (e) {
        out = { ok: false, error: String(e && e.message ? e.message : e) };
    }
    process.stdout.write(JSON.stringify(out) + '\n');
});
