// The source files the site shows: every lesson program (lessons/*/*.cpp) and
// every other file a chapter imports a region of (`<<< @/../path#region`).
// Shared by config.mts (the file label above each imported block), the
// complete-program pages (source/[slug].paths.mjs), the programs index
// (source/sources.data.mjs) and the unit tests, so none of them can drift from
// the files. Plain ES module, Node only.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHAPTERS } from './chapters.mjs';

export const DOCS_DIR = fileURLToPath(new URL('..', import.meta.url));
export const REPOSITORY_ROOT = fileURLToPath(new URL('../..', import.meta.url));

// Where "in the repository" links point: set RDMALAB_REPOSITORY_URL to a
// browsable tree of this repository (for example
// https://github.com/OWNER/rdmalab/blob/main) when building a site to publish.
// Empty (the default): the site links only to its own complete-program pages.
// Unset, it follows from the checkout's "origin" remote when that is a GitHub or GitLab https or
// ssh address (…/OWNER/NAME → https://HOST/OWNER/NAME/blob/main).
function originBlobUrl() {
  try {
    const origin = execFileSync('git', ['-C', REPOSITORY_ROOT, 'remote', 'get-url', 'origin'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const match = /^(?:https:\/\/|git@)(github\.com|gitlab\.com)[/:]([\w.-]+)\/([\w.-]+?)(?:\.git)?$/.exec(origin);
    return match ? `https://${match[1]}/${match[2]}/${match[3]}/blob/main` : '';
  } catch {
    return '';
  }
}
export const REPOSITORY_URL = (process.env.RDMALAB_REPOSITORY_URL ?? originBlobUrl()).replace(/\/+$/, '');

// The command a reader types to get the code. RDMALAB_CLONE_URL names it; otherwise it follows
// from a GitHub-style RDMALAB_REPOSITORY_URL (…/OWNER/rdmalab/blob/main → …/OWNER/rdmalab.git).
// With neither, the site says "URL-OF-THIS-REPOSITORY" and what to put there.
export const CLONE_URL = (process.env.RDMALAB_CLONE_URL
  ?? (/^(https:\/\/[^/]+\/[^/]+\/[^/]+)\/(blob|tree)\//.exec(REPOSITORY_URL)?.[1]?.concat('.git') ?? '')).trim();

// The source tarball docs/build.sh made for this build (docs/pack-source.sh packs HEAD): its
// name, size and SHA-256 come in through RDMALAB_SOURCE_FILE, _BYTES and _SHA256, and the site
// serves it at /download/FILE. null without one (a tree that is not a git checkout, or a bare
// `vitepress build`); a value that does not describe one fails the build.
export function sourceDownload(env = process.env) {
  const file = env.RDMALAB_SOURCE_FILE ?? '';
  if (!file) return null;
  const name = /^rdmalab-([0-9a-f]{7,40})\.tar\.gz$/.exec(file);
  const sha256 = env.RDMALAB_SOURCE_SHA256 ?? '';
  const bytes = Number(env.RDMALAB_SOURCE_BYTES);
  if (!name || !/^[0-9a-f]{64}$/.test(sha256) || !Number.isInteger(bytes) || bytes <= 0) {
    throw new Error(`docs: RDMALAB_SOURCE_FILE, _SHA256 and _BYTES do not describe a source tarball ("${file}", "${sha256}", "${env.RDMALAB_SOURCE_BYTES ?? ''}")`);
  }
  return { file, commit: name[1], sha256, bytes };
}
export const SOURCE_DOWNLOAD = sourceDownload();

const REGION_START = /^\s*\/\/\s*#region\s+([\w.-]+)\s*$/;
const REGION_END = /^\s*\/\/\s*#endregion(\s+([\w.-]+))?\s*$/;
const IMPORT = /^<<<\s+@\/\.\.\/([^#{\s]+)#([\w.-]+)/;

// The page slug of a repository file: a lesson is named after its directory
// (lessons/rdma-write/rdma-write.cpp -> rdma-write); any other file after its
// path (common/src/connection.cpp -> common-src-connection).
export function sourceSlug(file) {
  const lesson = /^lessons\/([\w-]+)\/\1\.cpp$/.exec(file);
  if (lesson) return lesson[1];
  return file.replace(/\.[^./]+$/, '').replace(/[^\w]+/g, '-');
}

export function sourceLink(file, region) {
  return `/source/${sourceSlug(file)}${region ? `#region-${region}` : ''}`;
}

export function repositoryLink(file, firstLine, lastLine) {
  if (!REPOSITORY_URL) return null;
  const lines = firstLine ? `#L${firstLine}${lastLine && lastLine !== firstLine ? `-L${lastLine}` : ''}` : '';
  return `${REPOSITORY_URL}/${file}${lines}`;
}

// The regions of a file: [{ name, start, end }] with 1-based line numbers of the
// "// #region" and "// #endregion" marker lines. Throws on a region that is not
// closed or closed twice, or on nesting (the pages show regions side by side).
export function parseRegions(text, file = 'a file') {
  const regions = [];
  let open = null;
  text.split('\n').forEach((line, index) => {
    const start = REGION_START.exec(line);
    const end = REGION_END.exec(line);
    if (start) {
      if (open) throw new Error(`${file}:${index + 1}: region "${start[1]}" opens inside region "${open.name}"`);
      open = { name: start[1], start: index + 1 };
    } else if (end) {
      if (!open) throw new Error(`${file}:${index + 1}: #endregion without a #region`);
      if (end[2] && end[2] !== open.name) throw new Error(`${file}:${index + 1}: #endregion ${end[2]} closes region "${open.name}"`);
      regions.push({ ...open, end: index + 1 });
      open = null;
    }
  });
  if (open) throw new Error(`${file}:${open.start}: region "${open.name}" is never closed`);
  return regions;
}

// What a chapter shows of a region: its lines without the markers, with every trace hook
// (a statement that starts `trace::`, which only `--trace` runs use) left out and the common
// indentation removed. { lines, omitted } where omitted counts the hook statements dropped.
// The complete-program pages show everything.
export const MAX_EXCERPT_LINES = 30;
export function excerptOf(text, region) {
  const all = text.split('\n').slice(region.start, region.end - 1);
  const lines = [];
  let omitted = 0;
  let inHook = false;
  for (const line of all) {
    if (!inHook && /^\s*trace::/.test(line)) {
      omitted += 1;
      inHook = true;
    }
    if (inHook) {
      if (/;\s*(\/\/.*)?$/.test(line)) inHook = false;
      continue;
    }
    lines.push(line);
  }
  const indent = Math.min(...lines.filter((l) => l.trim()).map((l) => /^\s*/.exec(l)[0].length));
  return { lines: lines.map((l) => l.slice(Number.isFinite(indent) ? indent : 0)), omitted };
}

// Every `<<< @/../file#region` in the chapters, in reading order:
// [{ file, region, chapter: { link, text }, index }] where index counts the
// imports of that file#region on that chapter (0 for the first).
export function chapterImports(docsDir = DOCS_DIR) {
  const imports = [];
  for (const chapter of CHAPTERS) {
    const markdown = readFileSync(path.join(docsDir, chapter.file), 'utf8');
    const seen = new Map();
    for (const line of markdown.split('\n')) {
      const match = IMPORT.exec(line.trim());
      if (!match) continue;
      const key = `${match[1]}#${match[2]}`;
      const index = seen.get(key) ?? 0;
      seen.set(key, index + 1);
      imports.push({ file: match[1], region: match[2], chapter: { link: chapter.link, text: chapter.text }, index });
    }
  }
  return imports;
}

// The id of an imported block on its chapter page (the complete-program page
// links back to it).
export function importAnchor(file, region, index = 0) {
  return `src-${sourceSlug(file)}-${region}${index ? `-${index + 1}` : ''}`;
}

// Every file the site shows, lessons first (alphabetical), then the other
// imported files: [{ file, slug, lesson, text, lines, regions }] where each
// region lists the chapters that import it.
export function sourceFiles(repositoryRoot = REPOSITORY_ROOT, docsDir = DOCS_DIR) {
  const lessonsDir = path.join(repositoryRoot, 'lessons');
  const lessonFiles = readdirSync(lessonsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(lessonsDir, entry.name, `${entry.name}.cpp`)))
    .map((entry) => `lessons/${entry.name}/${entry.name}.cpp`)
    .sort();
  const imports = chapterImports(docsDir);
  const others = [...new Set(imports.map((entry) => entry.file))]
    .filter((file) => !lessonFiles.includes(file))
    .sort();
  return [...lessonFiles, ...others].map((file) => {
    const text = readFileSync(path.join(repositoryRoot, file), 'utf8');
    const regions = parseRegions(text, file).map((region) => ({
      ...region,
      importedBy: imports.filter((entry) => entry.file === file && entry.region === region.name)
        .map((entry) => ({ ...entry.chapter, anchor: importAnchor(file, region.name, entry.index) })),
    }));
    return {
      file,
      slug: sourceSlug(file),
      lesson: file.startsWith('lessons/'),
      text,
      lines: text.replace(/\n$/, '').split('\n').length,
      regions,
    };
  });
}

// The first comment block of a file, as one paragraph of plain text (the
// lessons open with one saying what they teach).
export function leadingComment(text) {
  const lines = [];
  for (const line of text.split('\n')) {
    const match = /^\s*\/\/\s?(.*)$/.exec(line);
    if (!match) break;
    lines.push(match[1]);
  }
  return lines.join(' ').replace(/\s+/g, ' ').trim();
}

// The markdown of a complete-program page: the whole file top to bottom,
// split into blocks at its region markers, each region with an id, its line
// range and links back to the chapters that import it.
export function sourcePageMarkdown(source) {
  const lines = source.text.replace(/\n$/, '').split('\n');
  const longestRun = Math.max(3, ...[...source.text.matchAll(/`+/g)].map((m) => m[0].length + 1));
  const fence = '`'.repeat(longestRun);
  const language = /\.(cpp|cc|h|hpp)$/.test(source.file) ? 'cpp' : 'text';
  const block = (from, to) => `${fence}${language}\n${lines.slice(from - 1, to).join('\n')}\n${fence}\n`;
  const parts = [];
  let next = 1;
  for (const region of source.regions) {
    if (region.start > next) parts.push(block(next, region.start - 1));
    const importers = region.importedBy.length
      ? `shown in ${region.importedBy.map((c) => `<a href="${c.link === '/' ? '/' : c.link}#${c.anchor}">${escapeHtml(c.text)}</a>`).join(', ')}`
      : 'not imported by a chapter';
    const repository = repositoryLink(source.file, region.start, region.end);
    parts.push(`<div class="source-region-label" id="region-${region.name}">region <code>${region.name}</code>, lines ${region.start}–${region.end}: ${importers}${repository ? ` · <a href="${repository}">in the repository</a>` : ''}</div>\n\n<div class="source-region">\n\n${block(region.start, region.end)}\n</div>\n`);
    next = region.end + 1;
  }
  if (next <= lines.length) parts.push(block(next, lines.length));
  return parts.join('\n');
}

export function escapeHtml(text) {
  return String(text).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
