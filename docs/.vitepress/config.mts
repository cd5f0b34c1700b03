// VitePress configuration of the rdmalab tutorial site: fully offline (local
// search, system fonts, mermaid bundled), chapters from chapters.mjs, and code
// imported from the repository with `<<< @/../lessons/x/x.cpp#region{cpp}`.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitepress';
import { withMermaid } from 'vitepress-plugin-mermaid';
import { CHAPTERS } from './chapters.mjs';

const repositoryRoot = fileURLToPath(new URL('../..', import.meta.url));
const publicDir = fileURLToPath(new URL('../public', import.meta.url));

// `![...](/figures/x.svg)` names a figure docs/build.sh copies from
// bench/results. One the benchmark has not written yet would fail the whole
// build (Vite cannot resolve it); it becomes a visible "figure pending" note
// and a warning instead.
const warnedFigures = new Set();
function pendingFigures(md) {
  const renderImage = md.renderer.rules.image;
  md.renderer.rules.image = (tokens, index, options, env, self) => {
    const token = tokens[index];
    const source = token.attrGet('src') ?? '';
    if (source.startsWith('/figures/')) {
      const file = decodeURI(source.split(/[?#]/)[0]);
      if (!existsSync(`${publicDir}${file}`)) {
        const origin = `bench/results/${file.slice('/figures/'.length)}`;
        const warning = `docs: figure pending: ${origin} (used by ${env.relativePath ?? 'a page'}) does not exist yet`;
        if (!warnedFigures.has(warning)) console.warn(warning);
        warnedFigures.add(warning);
        const caption = md.utils.escapeHtml(token.content || file);
        return `<span class="figure-pending" data-figure="${md.utils.escapeHtml(file)}">Figure pending: <em>${caption}</em> appears once the benchmark has written <code>${md.utils.escapeHtml(origin)}</code>.</span>`;
      }
    }
    return renderImage(tokens, index, options, env, self);
  };
}

function sidebarGroups() {
  const groups = [];
  for (const chapter of CHAPTERS) {
    let group = groups.find((g) => g.text === chapter.group);
    if (!group) {
      group = { text: chapter.group, items: [] };
      groups.push(group);
    }
    group.items.push({ text: chapter.text, link: chapter.link });
  }
  return groups;
}

// VitePress imports the whole file when `<<< file#name` names a region the
// file does not have; here that fails the build instead, naming both.
function strictRegionImports(md) {
  const renderFence = md.renderer.rules.fence;
  md.renderer.rules.fence = (tokens, index, options, env, self) => {
    const [file, regionName] = tokens[index].src ?? [];
    if (file && regionName && existsSync(file)) {
      const escaped = regionName.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      const marker = new RegExp(`^(//|/\\*|#|<!--)?\\s*#?(pragma\\s+)?region\\s+${escaped}(\\s|\\*/|-->|$)`);
      const hasRegion = readFileSync(file, 'utf8').split('\n').some((line) => marker.test(line.trim()));
      if (!hasRegion) {
        throw new Error(`docs: ${env.relativePath ?? 'a page'} imports region "${regionName}" of ${path.relative(repositoryRoot, file)}, which has no "// #region ${regionName}" marker`);
      }
    }
    return renderFence(tokens, index, options, env, self);
  };
}

export default withMermaid(defineConfig({
  title: 'rdmalab',
  description: 'RDMA programming for the GPU era: verbs lessons that run on real libibverbs, a Soft-RoCE lab, and measurements.',
  lang: 'en-US',
  base: '/',
  cleanUrls: true,
  // The build fails on a link to a page that does not exist.
  ignoreDeadLinks: false,
  head: [['link', { rel: 'icon', type: 'image/svg+xml', href: '/favicon.svg' }]],
  markdown: {
    lineNumbers: false,
    config(md) {
      pendingFigures(md);
      strictRegionImports(md);
    },
    // Code is C++ mostly; keep highlighting to the languages the site uses.
    languages: ['cpp', 'c', 'sh', 'bash', 'console', 'json', 'js', 'ts', 'python', 'yaml', 'ini', 'diff', 'text'],
  },
  themeConfig: {
    nav: [
      { text: 'Home', link: '/' },
      { text: 'Chapters', link: '/why-rdma' },
      { text: 'QP explorer', link: '/queue-pairs#qp-explorer' },
    ],
    sidebar: sidebarGroups(),
    outline: { level: [2, 3] },
    search: { provider: 'local' },
    docFooter: { prev: 'Previous chapter', next: 'Next chapter' },
  },
  mermaid: {
    // Sizes the diagrams to their container, so they fit on a phone too.
    flowchart: { useMaxWidth: true },
    sequence: { useMaxWidth: true },
  },
  vite: {
    // The dev server may read code imported from outside docs/ (lessons/, common/, bench/).
    server: { fs: { allow: [repositoryRoot] } },
    // No network during a build: nothing to prefetch, no telemetry.
    clearScreen: false,
    // mermaid is one large chunk by design; it is loaded only by pages with a diagram.
    build: { chunkSizeWarningLimit: 4096 },
  },
}));
