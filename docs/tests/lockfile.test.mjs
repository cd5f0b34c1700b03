// The npm lockfile is whole: `npm ci` refuses a package-lock.json in which a
// package's dependency (optional ones included: rollup's and esbuild's
// per-platform builds) has no entry, which is how the site's install once fell
// back to an unpinned `npm install`. Checked offline, against the file.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const lock = JSON.parse(readFileSync(new URL('../package-lock.json', import.meta.url), 'utf8'));
const manifest = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));
const packages = lock.packages ?? {};

// Node's lookup: node_modules/a/node_modules/b, then node_modules/b.
function resolve(fromPath, name) {
  let base = fromPath;
  for (;;) {
    const candidate = `${base ? `${base}/` : ''}node_modules/${name}`;
    if (packages[candidate]) return candidate;
    if (!base) return null;
    const cut = base.lastIndexOf('/node_modules/');
    base = cut < 0 ? '' : base.slice(0, cut);
  }
}

test('lockfile version 3 for this package.json', () => {
  assert.equal(lock.lockfileVersion, 3);
  assert.deepEqual(packages['']?.devDependencies, manifest.devDependencies);
});

test('every dependency and optional dependency in the lockfile has an entry', () => {
  const missing = [];
  for (const [where, entry] of Object.entries(packages)) {
    for (const field of ['dependencies', 'optionalDependencies', 'devDependencies']) {
      if (where !== '' && field === 'devDependencies') continue;
      for (const name of Object.keys(entry[field] ?? {})) {
        if (entry.peerDependenciesMeta?.[name]?.optional) continue;
        if (!resolve(where, name)) missing.push(`${where || '(root)'} -> ${name}`);
      }
    }
  }
  assert.deepEqual(missing, [], `entries npm ci would miss: ${missing.slice(0, 10).join(', ')}`);
});

test('the rollup override matches the rollup the lockfile pins', () => {
  const pinned = manifest.overrides?.rollup;
  assert.ok(pinned, 'package.json overrides rollup');
  assert.equal(packages['node_modules/rollup']?.version, pinned);
  const builds = Object.keys(packages).filter((key) => key.startsWith('node_modules/@rollup/rollup-'));
  assert.ok(builds.length >= 20, `${builds.length} rollup platform builds in the lockfile`);
  for (const key of builds) assert.equal(packages[key].version, pinned, key);
});
