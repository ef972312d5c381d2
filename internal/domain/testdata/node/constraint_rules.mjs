// Runs Unleash's own checks of constraints and variant order over the
// cases given as JSON on stdin: {"constraints": [...], "names": [...]}.
// Each constraint goes through the request schema (constraintSchema, as
// the strategy and segment routes apply it) and then the ConstraintsReadModel
// validation the server runs before storing it. Prints one JSON object:
// {"constraints": ["" for accepted, else the error], "sorted": names in
// the order Unleash stores variants (localeCompare)}.
// Usage: node constraint_rules.mjs <node_modules directory>
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const dist = path.join(process.argv[2], 'unleash-server', 'dist', 'lib');
const load = (file) => import(pathToFileURL(path.join(dist, file)).href);
const { validateSchema } = await load('openapi/validate.js');
const { ConstraintsReadModel } = await load('features/constraints/constraints-read-model.js');
const model = new ConstraintsReadModel({ exists: async () => false });

let input = '';
for await (const chunk of process.stdin) input += chunk;
const { constraints, names } = JSON.parse(input);
const results = [];
for (const c of constraints) {
  const invalid = validateSchema('#/components/schemas/constraintSchema', c);
  if (invalid) {
    results.push('schema: ' + JSON.stringify(invalid.errors[0]));
    continue;
  }
  try {
    await model.validateConstraint(c);
    results.push('');
  } catch (e) {
    results.push(String(e.message || e));
  }
}
const sorted = [...names].sort((a, b) => a.localeCompare(b));
console.log(JSON.stringify({ constraints: results, sorted }));
