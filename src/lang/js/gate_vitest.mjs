// gate's Vitest runner: runs exactly the test files listed (Vitest's own file arguments are
// substring filters, and `--` drops them), through Vitest's API, with its JUnit reporter
// writing each test's result. Run from the project's folder, with the project's own Vitest.
// usage: node gate_vitest.mjs ARGS JUNIT_OUT FILES
//   ARGS: the user's runner arguments (`gate … -- ARGS`, checked against gate's allow-list) as
//   a JSON array, read by Vitest's own command-line parser into the run's options;
//   FILES: a JSON file holding an array of paths relative to the folder, or the array itself
//   (`[…]`); JUNIT_OUT `-`: no report (`gate audit` traces one file, the script given inline:
//   `node --input-type=module --eval SCRIPT -- ARGS - FILES`, which is why the last three
//   arguments are read).
// exit: 0 passed, 1 a test or the run failed, 3 Vitest is not installed here, 4 a listed file
// is no test file of any Vitest project, 5 Vitest cannot read ARGS.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createRequire } from 'node:module';

const [args, out, listed] = process.argv.slice(-3);
let entry;
try {
  entry = createRequire(resolve('package.json')).resolve('vitest/node');
} catch (e) {
  console.error(`gate: Vitest is not installed in ${process.cwd()} (${e.code ?? e.message}): install the project's packages first (npm ci)`);
  process.exit(3);
}
const { createVitest, parseCLI } = await import(pathToFileURL(entry).href);
const user = options(JSON.parse(args));
// A test Vitest never started (`--bail` stopped the run before it) has no result, which its
// JUnit reporter writes as a test case with no failure: a pass. Marked skipped first: Vitest
// calls its reporters in order, and this one's hook returns before the next is called.
const unrun = {
  onTestRunEnd(modules) {
    for (const module of modules) {
      for (const test of module.children.allTests()) {
        if (test.result().state === 'pending') test.task.mode = 'skip';
      }
    }
  },
};
// gate's own options last: the user's cannot replace the reporter gate reads.
const vitest = await createVitest('test', {
  ...user,
  watch: false,
  // Vitest's results cache (failed and slow files first) is read at the start and rewritten at
  // the end: a file every run changes would keep every pass out of gate's ledger. It orders
  // files, nothing else.
  cache: false,
  ...(out === '-'
    ? { reporters: ['default'] }
    : { reporters: [unrun, 'default', ['junit', { addFileAttribute: true }]], outputFile: { junit: out } }),
});
await vitest.standalone();
const list = listed.startsWith('[') ? listed : readFileSync(listed, 'utf8');
const files = JSON.parse(list).map((f) => resolve(f));
// Vitest's own collection, each file with the pool it runs in (a type test, `*.test-d.ts`,
// runs in the type checker's): the listed files are picked from it, never given to a pool
// gate chose.
const wanted = new Set(files);
const specs = (await vitest.globTestSpecifications()).filter((s) => wanted.has(s.moduleId));
const found = new Set(specs.map((s) => s.moduleId));
const strays = files.filter((f) => !found.has(f));
if (strays.length > 0) {
  console.error(`gate: no Vitest project collects ${strays.join(', ')}`);
  await vitest.close();
  process.exit(4);
}
const result = await vitest.runTestSpecifications(specs);
await vitest.close();
const ok = result.testModules.every((m) => m.ok()) && result.unhandledErrors.length === 0;
process.exit(ok ? 0 : 1);

// The options `words` give, as `vitest run WORDS` reads them (`parseCLI`, Vitest 2 and later);
// exit 5 when Vitest cannot read them, or reads a word as a filter on the files.
function options(words) {
  if (words.length === 0) return {};
  const say = (why) => {
    console.error(`gate: Vitest cannot read the runner arguments \`${words.join(' ')}\`: ${why}`);
    process.exit(5);
  };
  if (typeof parseCLI !== 'function') say('this Vitest has no parseCLI (Vitest 2 or later reads them)');
  let parsed;
  try {
    parsed = parseCLI(['vitest', 'run', ...words]);
  } catch (e) {
    say(e.message);
  }
  if (parsed.filter.length > 0) say(`it reads ${parsed.filter.join(', ')} as a filter on the files`);
  // `--`: what followed a `--` (gate refuses one).
  const { '--': _, ...rest } = parsed.options;
  return rest;
}
