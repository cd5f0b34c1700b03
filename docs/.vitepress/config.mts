// VitePress configuration of the rdmalab tutorial site: fully offline (local
// search, system fonts, mermaid bundled), chapters from chapters.mjs, and code
// imported from the repository with `<<< @/../lessons/x/x.cpp#region{cpp}`.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitepress';
import { withMermaid } from 'vitepress-plugin-mermaid';
import { CHAPTERS } from './chapters.mjs';
import { CLONE_URL, escapeHtml, excerptOf, importAnchor, parseRegions, repositoryLink, SOURCE_DOWNLOAD, sourceFiles, sourceLink } from './sources.mjs';
import container from 'markdown-it-container';
import { glossaryLinks, glossaryPage } from './glossary-links.mjs';

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

// The sidebar: chapters.mjs's groups in order. A chapter on the core path carries a "core" mark
// after its title (the sidebar renders an item's text as HTML); the previous/next links at a
// page's foot show the plain title (docFooterText).
function sidebarGroups() {
  const groups = [];
  for (const chapter of CHAPTERS) {
    let group = groups.find((g) => g.text === chapter.group);
    if (!group) {
      group = { text: chapter.group, items: [] };
      groups.push(group);
    }
    const text = chapter.core
      ? `${chapter.text} <span class="core-mark" title="on the core path">core</span>`
      : chapter.text;
    group.items.push({ text, link: chapter.link, docFooterText: chapter.text });
  }
  return groups;
}

// VitePress imports the whole file when `<<< file#name` names a region the
// file does not have; here that fails the build instead, naming both. Every
// imported region gets a label above it: the file, the region and its lines,
// and links to the whole program (its /source/ page) and, when
// RDMALAB_REPOSITORY_URL is set, to the file in the repository.
// The files that have a complete-program page (read once).
let pageFiles: Set<string> | undefined;
function filesWithAPage(): Set<string> {
  pageFiles ??= new Set(sourceFiles().map((source) => source.file));
  return pageFiles;
}

function strictRegionImports(md) {
  const renderFence = md.renderer.rules.fence;
  md.renderer.rules.fence = (tokens, index, options, env, self) => {
    const [file, regionName] = tokens[index].src ?? [];
    if (!file || !existsSync(file)) return renderFence(tokens, index, options, env, self);
    const relative = path.relative(repositoryRoot, file).split(path.sep).join('/');
    // A file with a complete-program page links to it; one shown whole on its own page (an
    // exercise's starter) has none to link to.
    const hasPage = regionName || filesWithAPage().has(relative);
    let label = hasPage
      ? `<a href="${sourceLink(relative)}"><code>${escapeHtml(relative)}</code></a>`
      : `<code>${escapeHtml(relative)}</code>`;
    let anchor = '';
    let omitted = 0;
    if (regionName) {
      const text = readFileSync(file, 'utf8');
      const region = parseRegions(text, relative).find((r) => r.name === regionName);
      if (!region) {
        throw new Error(`docs: ${env.relativePath ?? 'a page'} imports region "${regionName}" of ${relative}, which has no "// #region ${regionName}" marker`);
      }
      // The excerpt the reader sees: the region without its trace hooks (see excerptOf).
      const excerpt = excerptOf(text, region);
      tokens[index].src = undefined;
      tokens[index].content = `${excerpt.lines.join('\n')}\n`;
      omitted = excerpt.omitted;
      env.rdmalabImports ??= new Map();
      const key = `${relative}#${regionName}`;
      const count = env.rdmalabImports.get(key) ?? 0;
      env.rdmalabImports.set(key, count + 1);
      anchor = ` id="${importAnchor(relative, regionName, count)}"`;
      const repository = repositoryLink(relative, region.start, region.end);
      label += ` <span class="code-source-region">region <code>${escapeHtml(regionName)}</code>, lines ${region.start}–${region.end}</span>`
        + ` <a class="code-source-whole" href="${sourceLink(relative, regionName)}">the whole program</a>`
        + (repository ? ` <a class="code-source-repository" href="${repository}">repository</a>` : '')
        + (omitted ? ` <span class="code-source-omitted">${omitted} tracing line${omitted > 1 ? 's' : ''} left out</span>` : '');
    }
    const rendered = renderFence(tokens, index, options, env, self);
    return `<div class="code-source"${anchor}>${label}</div>\n${rendered}`;
  };
}

function programsSidebar() {
  return {
    text: 'Complete programs',
    collapsed: true,
    items: [
      { text: 'All programs', link: '/source/' },
      ...sourceFiles().filter((source) => source.lesson).map((source) => ({ text: source.slug, link: `/source/${source.slug}` })),
    ],
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
      // The glossary page's entries, and each term linked at its first use on every other page.
      glossaryPage(md);
      glossaryLinks(md);
      // ::: goals [TITLE] … ::: opens a chapter: what the reader will be able to do at its end.
      md.use(container, 'goals', {
        render(tokens, index) {
          const title = tokens[index].info.trim().replace(/^goals\s*/, '') || 'In this chapter';
          return tokens[index].nesting === 1
            ? `<div class="chapter-goals custom-block"><p class="custom-block-title">${md.utils.escapeHtml(title)}</p>\n`
            : '</div>\n';
        },
      });
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
    sidebar: [...sidebarGroups(), programsSidebar()],
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
    // The clone command and the source download on the home page and in getting started
    // (sources.mjs: CLONE_URL, SOURCE_DOWNLOAD).
    define: {
      __RDMALAB_CLONE_URL__: JSON.stringify(CLONE_URL),
      __RDMALAB_SOURCE_DOWNLOAD__: JSON.stringify(SOURCE_DOWNLOAD),
    },
    // The dev server may read code imported from outside docs/ (lessons/, common/, bench/).
    server: { fs: { allow: [repositoryRoot] } },
    // No network during a build: nothing to prefetch, no telemetry.
    clearScreen: false,
    // mermaid is one large chunk by design; it is loaded only by pages with a diagram.
    build: { chunkSizeWarningLimit: 4096 },
  },
}));
