/**
 * The layering of src/ (src/README.md draws it): each layer imports only from the layers below it,
 * type-only imports included, and no module takes part in an import cycle. Run by `npm run lint`
 * (so by `npm test`); test/package/layers.test.ts shows the rules catch a planted violation.
 */

/** Bottom first. A module may import its own layer and the ones listed before it. */
const layers = [
  ['platform', '^src/(platform/|version\\.ts$)'],
  ['util', '^src/util/'],
  ['core', '^src/core/'],
  ['internal', '^src/internal/'],
  ['links', '^src/links/'],
  ['client', '^src/(client\\.ts$|resources/|schemas/)'],
  ['features', '^src/(access|tracker|webhooks|gate|credits)/'],
  ['view', '^src/view/'],
  ['adapters', '^src/(redis|node|postgres|ai)/'],
  ['testing', '^src/testing/'],
  ['cli', '^src/cli/'],
  ['entries', '^src/index\\.ts$'],
];

const upward = layers.slice(0, -1).map(([name, path], i) => ({
  name: `${name}-imports-upward`,
  comment: `${name} imports only from the layers below it (${
    layers
      .slice(0, i)
      .map(([n]) => n)
      .join(', ') || 'none'
  })`,
  severity: 'error',
  from: { path },
  to: {
    path: layers
      .slice(i + 1)
      .map(([, p]) => `(${p})`)
      .join('|'),
  },
}));

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'no import cycle in src/, type-only imports included',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...upward,
    {
      name: 'view-stands-alone',
      comment:
        'billing-sdk/view is what a browser downloads: its own error and the state type only (no zod, ky or jose)',
      severity: 'error',
      from: { path: '^src/view/' },
      to: { pathNot: '^src/(view/|core/errors/(base|names|view)\\.ts$|gate/state-types\\.ts$)' },
    },
    {
      name: 'entries-stay-apart',
      comment:
        'a package entry never imports another entry (the main entry never loads Redis, Postgres, Node-only or mock code)',
      severity: 'error',
      from: { path: '^src/' },
      to: {
        path: '^src/(index|redis/index|node/index|postgres/index|testing/index|ai/index|view/index)\\.ts$',
      },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'every import resolves',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    includeOnly: '^src/',
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    doNotFollow: { path: 'node_modules' },
  },
};
