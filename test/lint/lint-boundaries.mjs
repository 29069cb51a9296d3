// Runs the project's eslint.config.mjs with only its boundary rules, through ESLint's Node API,
// and prints the files it linted and their messages as JSON. The typed rules (and the type-aware parse they need) are left
// out so the boundary check takes seconds; the config is the same file `npm run lint` reads.
// Usage: node test/lint/lint-boundaries.mjs [--fixtures] <path>...
import { ESLint } from 'eslint';

const root = new URL('../..', import.meta.url).pathname;
const args = process.argv.slice(2);
const fixtures = args.includes('--fixtures');
const paths = args.filter((arg) => arg !== '--fixtures');

const eslint = new ESLint({
  cwd: root,
  // The fixtures are in the config's ignores so `npm run lint` never sees their planted errors.
  ignore: !fixtures,
  ruleFilter: ({ ruleId }) => ruleId.startsWith('boundaries/'),
  overrideConfig: { languageOptions: { parserOptions: { projectService: false } } },
});
const results = await eslint.lintFiles(paths);
const files = results.map((result) => result.filePath.slice(root.length));
const messages = results.flatMap((result) =>
  result.messages.map(({ ruleId, message, line }) => ({
    file: result.filePath.slice(root.length),
    line,
    ruleId,
    message,
  })),
);
process.stdout.write(JSON.stringify({ files, messages }, null, 2) + '\n');
