// The source download: the site carries the code it was built from, HEAD as `git archive` packs
// it (docs/pack-source.sh, run by docs/build.sh), for readers who reach the site but not the
// repository. Checked here: the build's environment is read strictly; the pack script's tarball,
// its SHA-256 file and the tree it unpacks to, where ./rdmalab help runs with nothing built; its
// one line and no file outside a git checkout; and the built site's tarball, whose name and
// SHA-256 are the ones the home page and Getting started show and whose files are its commit's.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { sourceDownload } from '../.vitepress/sources.mjs';

const DOCS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const REPO = path.resolve(DOCS_DIR, '..');
const DIST = path.join(DOCS_DIR, '.vitepress', 'dist');
const PACK = path.join(DOCS_DIR, 'pack-source.sh');

function git(...args) {
  return execFileSync('git', ['-C', REPO, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 });
}
// This project's own checkout, not a folder inside another repository (pack-source.sh's test).
function isCheckout() {
  try {
    return realpathSync(git('rev-parse', '--show-toplevel').trim()) === realpathSync(REPO);
  } catch {
    return false;
  }
}
const sha256Of = (file) => createHash('sha256').update(readFileSync(file)).digest('hex');
function scratch(t) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rdmalab-source-test-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
// The files a tarball holds (directories left out), with its top-level folder.
function filesIn(tarball) {
  return execFileSync('tar', ['tzf', tarball], { encoding: 'utf8', maxBuffer: 64 << 20 })
    .split('\n').filter((entry) => entry && !entry.endsWith('/'));
}
// Unpacks a tarball and runs ./rdmalab help in its folder: status 0 and the usage, nothing built.
function unpacksToAWorkingTree(t, tarball, folder) {
  const into = scratch(t);
  execFileSync('tar', ['xzf', tarball, '-C', into]);
  const tree = path.join(into, folder);
  const run = spawnSync('./rdmalab', ['help'], { cwd: tree, encoding: 'utf8', timeout: 30_000 });
  assert.equal(run.status, 0, `./rdmalab help in the unpacked ${folder} exited ${run.status}: ${run.stderr}`);
  assert.match(run.stdout, /^rdmalab: the project's one entry point/);
  assert.match(run.stdout, /^ {2}\.\/rdmalab tour /m);
  assert.ok(!existsSync(path.join(tree, 'build')), './rdmalab help built something');
}

test('the build names its tarball in RDMALAB_SOURCE_*, strictly, or names none', () => {
  const sha256 = '5625e79df92ea22e8e6fd7190d942c656643b34c278e0a0347a201b5d1afe0e7';
  const good = { RDMALAB_SOURCE_FILE: 'rdmalab-b22600a.tar.gz', RDMALAB_SOURCE_SHA256: sha256, RDMALAB_SOURCE_BYTES: '1266802' };
  assert.equal(sourceDownload({}), null);
  assert.deepEqual(sourceDownload(good), { file: 'rdmalab-b22600a.tar.gz', commit: 'b22600a', sha256, bytes: 1266802 });
  for (const bad of [
    { RDMALAB_SOURCE_FILE: '../rdmalab-b22600a.tar.gz' }, { RDMALAB_SOURCE_FILE: 'rdmalab-main.tar.gz' },
    { RDMALAB_SOURCE_SHA256: sha256.slice(1) }, { RDMALAB_SOURCE_SHA256: sha256.toUpperCase() },
    { RDMALAB_SOURCE_BYTES: '0' }, { RDMALAB_SOURCE_BYTES: undefined }, { RDMALAB_SOURCE_BYTES: '1.5' },
  ]) {
    assert.throws(() => sourceDownload({ ...good, ...bad }), /do not describe a source tarball/, JSON.stringify(bad));
  }
});

test('pack-source.sh packs HEAD under rdmalab-COMMIT/ with its SHA-256, into a tree where ./rdmalab help runs', (t) => {
  if (!isCheckout()) return t.skip('not a git checkout: nothing to pack');
  const out = scratch(t);
  const run = spawnSync(PACK, [out], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(run.status, 0, `pack-source.sh exited ${run.status}: ${run.stdout}${run.stderr}`);
  const commit = git('rev-parse', '--short', 'HEAD').trim();
  const name = `rdmalab-${commit}`;
  const tarball = path.join(out, `${name}.tar.gz`);
  assert.deepEqual(readdirSync(out).sort(), [`${name}.tar.gz`, `${name}.tar.gz.sha256`]);
  const sha256 = sha256Of(tarball);
  assert.equal(readFileSync(`${tarball}.sha256`, 'utf8'), `${sha256}  ${name}.tar.gz\n`, 'sha256sum -c reads the file');
  assert.match(run.stdout, new RegExp(`^docs: packed HEAD \\(${commit}\\) into ${name}\\.tar\\.gz: \\d+ bytes, SHA-256 ${sha256}$`, 'm'));
  // The warning says the tarball lacks the tree's changes exactly when there are some.
  const differs = git('status', '--porcelain') !== '';
  assert.equal(/^docs: warning: \d+ path\(s\) differ from HEAD .* holds HEAD/m.test(run.stdout), differs, run.stdout);
  const outside = filesIn(tarball).filter((entry) => !entry.startsWith(`${name}/`));
  assert.deepEqual(outside, [], `paths outside ${name}/`);
  unpacksToAWorkingTree(t, tarball, name);
});

test('outside a git checkout pack-source.sh packs nothing and says so in one line', (t) => {
  const tree = path.join(scratch(t), 'rdmalab-unpacked');
  mkdirSync(path.join(tree, 'docs'), { recursive: true });
  copyFileSync(PACK, path.join(tree, 'docs', 'pack-source.sh'));
  const out = path.join(tree, 'out');
  const run = spawnSync('bash', [path.join(tree, 'docs', 'pack-source.sh'), out], { encoding: 'utf8', timeout: 30_000 });
  assert.equal(run.status, 0, `exited ${run.status}: ${run.stderr}`);
  assert.match(run.stdout, /^docs: \S+ is not a git checkout: no source download for the site\n$/);
  assert.ok(!existsSync(out), 'it wrote something');
});

test("the built site carries its source: the tarball the pages name, with the SHA-256 they show and its commit's files", (t) => {
  if (!existsSync(path.join(DIST, 'index.html'))) return t.skip('the site is not built (docs/build.sh)');
  const dir = path.join(DIST, 'download');
  const tarballs = existsSync(dir) ? readdirSync(dir).filter((name) => /^rdmalab-[0-9a-f]+\.tar\.gz$/.test(name)) : [];
  if (!tarballs.length && !isCheckout()) return t.skip('built outside a git checkout: the site has no download');
  assert.equal(tarballs.length, 1, `the built site's download/ holds ${tarballs.length} source tarballs, not 1 (docs/build.sh puts one there)`);
  const file = tarballs[0];
  const folder = file.replace(/\.tar\.gz$/, '');
  const tarball = path.join(dir, file);
  const sha256 = sha256Of(tarball);
  assert.equal(readFileSync(`${tarball}.sha256`, 'utf8'), `${sha256}  ${file}\n`);
  for (const page of ['index.html', 'getting-started.html']) {
    const html = readFileSync(path.join(DIST, page), 'utf8');
    assert.equal(/<a class="download-source-link" href="([^"]*)"/.exec(html)?.[1], `/download/${file}`, `${page}: the download link`);
    assert.equal(/class="download-source-sha256">([^<]*)</.exec(html)?.[1], sha256, `${page}: the SHA-256 shown`);
  }
  const commit = folder.slice('rdmalab-'.length);
  const files = filesIn(tarball).map((entry) => entry.slice(`${folder}/`.length)).sort();
  let tracked = null;
  try {
    tracked = git('ls-tree', '-r', '-z', '--name-only', commit).split('\0').filter(Boolean).sort();
  } catch {
    t.diagnostic(`commit ${commit} is not in this checkout: its file list not compared`);
  }
  if (tracked) assert.deepEqual(files, tracked, `the tarball's files are not commit ${commit}'s`);
  unpacksToAWorkingTree(t, tarball, folder);
});
