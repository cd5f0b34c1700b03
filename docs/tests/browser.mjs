// Browser tests of the built site (docs/.vitepress/dist) in Debian's headless
// Chromium through playwright-core: every chapter renders with no console or
// page errors, no request leaves 127.0.0.1, every internal link and #anchor
// resolves, the source download is linked and answers at 1280 and 390 px,
// the QP explorer responds to clicks and fits a phone, a mermaid
// diagram renders; at 1280 px no code block or table scrolls sideways, every
// imported code block carries its file label and link, every lesson has a
// complete-program page with its regions marked, and at 1280 and 390 px no
// diagram text renders below 11 px or sticks out of its box. Prints one line
// per check and a closing
// "browser: N passed, M failed"; exits non-zero on any failure — or, where RDMALAB_CHECK_RECORDS
// names a file (CTest's docs.browser), records the checks by part and exits 0 once the run
// completes, each part's CTest test giving its verdict.
//   node docs/tests/browser.mjs [--screenshots DIR] [--page /extra-path ...]
// (--page: one more page to visit; with --screenshots, also a PNG of it whole)
import { appendFileSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm, mkdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { CHAPTERS } from '../.vitepress/chapters.mjs';
import { chapterImports, sourceFiles } from '../.vitepress/sources.mjs';
import { attributeTable, TRANSPORTS } from '../.vitepress/theme/qp-model.js';
import { VERBS } from '../.vitepress/verbs.mjs';
import { startServer } from './serve.mjs';
import { checkCourse, checkSourceDownload, courseChapters, courseInfoArguments, courseInfoInPage, scrollCuesInPage } from './course-checks.mjs';
import { checkHintsOneAtATime } from './browser-hints.mjs';
import { checkCmLabels, checkJumps, checkLanesInView, checkTwoLanesOnPhone } from './browser-traces.mjs';

const DOCS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const DIST_DIR = path.join(DOCS_DIR, '.vitepress', 'dist');
const CHROMIUM = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync', '--no-first-run',
];
const PAGE_TIMEOUT_MS = 30_000;
const STEP_TIMEOUT_MS = 10_000;
const WHOLE_RUN_LIMIT_MS = 8 * 60_000;
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

function parseArguments(argv) {
  const options = { screenshotsDir: null, extraPages: [] };
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === '--screenshots') options.screenshotsDir = path.resolve(argv[++i] ?? '');
    else if (argv[i] === '--page') options.extraPages.push(argv[++i]);
    else throw new Error(`unknown argument: ${argv[i]}`);
  }
  return options;
}

// Parts, as the shell tests have them (tests/checks.sh): where RDMALAB_CHECK_RECORDS names a
// file, every check appends "PART<TAB>ok|FAIL<TAB>TEXT" to it and a run that completed ends it
// with "#complete"; CTest's docs.browser.PART tests read them (tests/part-verdict.sh), so CTest
// counts the site's checks part by part. tests/CMakeLists.txt reads the part names from the
// `part('NAME');` lines below: a part is a literal word there.
const RECORDS = process.env.RDMALAB_CHECK_RECORDS || '';
let currentPart = 'start';
function part(name) {
  currentPart = name;
}
function record(verdict, text) {
  if (RECORDS) appendFileSync(RECORDS, `${currentPart}\t${verdict}\t${text.replace(/[\t\n]/g, ' ')}\n`);
}

const results = { passed: 0, failed: 0 };
function pass(text) {
  results.passed += 1;
  record('ok', text);
  console.log(`PASS ${text}`);
}
function fail(text) {
  results.failed += 1;
  record('FAIL', text);
  console.log(`FAIL ${text}`);
}
function skip(text) {
  console.log(`SKIP ${text}`);
}

// One key per page whatever the URL spelling: "/", "/why-rdma" (".html" and a
// trailing "/index" or "/" dropped).
function pageKey(pathname) {
  let key = decodeURI(pathname).replace(/\.html$/, '').replace(/\/index$/, '/');
  if (key.length > 1) key = key.replace(/\/$/, '');
  return key || '/';
}

function isLocalUrl(url) {
  if (url.startsWith('data:') || url.startsWith('blob:') || url.startsWith('about:')) return true;
  try {
    return LOCAL_HOSTS.has(new URL(url).hostname);
  } catch {
    return false;
  }
}

async function main() {
  const options = parseArguments(process.argv.slice(2));
  if (RECORDS) writeFileSync(RECORDS, '');
  let completed = false;
  const server = await startServer(DIST_DIR, 0);
  const userDataDir = await mkdtemp(path.join(os.tmpdir(), 'rdmalab-docs-chromium-'));
  let context = null;
  const cleanUp = async () => {
    await context?.close().catch(() => {});
    await server.close().catch(() => {});
    await rm(userDataDir, { recursive: true, force: true }).catch(() => {});
  };
  const watchdog = setTimeout(async () => {
    fail(`browser tests: the whole run took longer than ${WHOLE_RUN_LIMIT_MS / 1000} s`);
    await cleanUp();
    console.log(`browser: ${results.passed} passed, ${results.failed} failed`);
    process.exit(1);
  }, WHOLE_RUN_LIMIT_MS);
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, async () => {
      await cleanUp();
      process.exit(130);
    });
  }

  try {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_ARGS,
      viewport: { width: 1280, height: 800 },
      timeout: PAGE_TIMEOUT_MS,
    });
    context.setDefaultTimeout(STEP_TIMEOUT_MS);
    context.setDefaultNavigationTimeout(PAGE_TIMEOUT_MS);
    await runChecks(context, server.url, options);
    completed = true;
  } catch (error) {
    fail(`browser tests stopped: ${error.message.split('\n')[0]}`);
  } finally {
    clearTimeout(watchdog);
    await cleanUp();
  }
  console.log(`browser: ${results.passed} passed, ${results.failed} failed`);
  if (completed && RECORDS) {
    // In parts: each part's CTest test gives the verdict; this run passes if it came to its end.
    appendFileSync(RECORDS, '#complete\n');
    process.exitCode = 0;
  } else {
    process.exitCode = results.failed === 0 ? 0 : 1;
  }
}

async function runChecks(context, baseUrl, options) {
  // Every request is watched; one to any other host is recorded and refused.
  const outsideRequests = new Set();
  let requestCount = 0;
  context.on('request', (request) => {
    requestCount += 1;
    if (!isLocalUrl(request.url())) outsideRequests.add(request.url());
  });
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (isLocalUrl(url)) return route.continue();
    outsideRequests.add(url);
    return route.abort('blockedbyclient');
  });

  const page = context.pages()[0] ?? await context.newPage();
  const pageProblems = [];
  page.on('console', (message) => {
    if (message.type() === 'error') pageProblems.push(`console error: ${message.text()}`);
  });
  page.on('pageerror', (error) => pageProblems.push(`page error: ${error.message}`));

  // 1. Every chapter (and every extra page asked for) renders.
  part('pages');
  const sources = sourceFiles();
  const sourcePages = ['/source/', ...sources.map((source) => `/source/${source.slug}`)];
  // The per-call pages come from one template (tests/verbs.test.mjs checks every one's links
  // and lessons): every eighth is rendered here, the first and the last among them.
  const verbPages = VERBS.filter((verb, i) => i % 8 === 0 || i === VERBS.length - 1).map((verb) => `/verbs/${verb.name}`);
  const pagesToVisit = [...CHAPTERS.map((chapter) => chapter.link), ...sourcePages, ...verbPages, ...options.extraPages];
  const visited = new Map(); // page key -> { ids, links, hasExplorer, mermaidCount }
  for (const link of pagesToVisit) {
    const key = pageKey(link);
    pageProblems.length = 0;
    try {
      const info = await visitPage(page, `${baseUrl}${link}`, { light: link.startsWith('/source/') || link.startsWith('/verbs/') });
      if (info.ok && (info.diagramCount || info.mermaidCount)) {
        await waitForCondition(page, `the diagrams on ${link} to render`, () => [...document.querySelectorAll('.mermaid')].every((block) => block.querySelector('svg')));
        info.diagrams = await page.evaluate(measureDiagramsInPage);
      }
      if (info.ok && !link.startsWith('/source/')) info.course = await page.evaluate(courseInfoInPage, courseInfoArguments(link));
      visited.set(key, info);
      if (!info.ok) fail(`page ${link}: HTTP ${info.status}`);
      else if (!info.heading) fail(`page ${link}: no <h1>`);
      else if (pageProblems.length) fail(`page ${link}: ${pageProblems.slice(0, 3).join(' | ')}`);
      else if (info.brokenImages.length) fail(`page ${link}: image(s) that do not load: ${info.brokenImages.join(', ')}`);
      else pass(`page ${link} renders: h1 "${info.heading}", no console or page errors`);
      if (info.ok && info.pendingFigures.length) {
        console.log(`NOTE page ${link}: figure(s) pending until the benchmark writes them: ${info.pendingFigures.join(', ')}`);
      }
    } catch (error) {
      fail(`page ${link}: ${error.message.split('\n')[0]}`);
    }
  }

  // 1b. Code that fits (at 1280 px, the viewport of the loop above), labelled
  // imports, complete programs with their regions.
  part('code');
  checkFit(visited);
  checkImportLabels(visited);
  checkSourcePages(visited, sources);
  // 1c. The course: the door, each chapter's frame and length, excerpts, glossary links.
  part('course');
  checkCourse(visited, pass, fail, pageKey);

  // 2. Internal links and anchors resolve: the navigation bar and sidebar
  // (the same on every page) once, then each page's own content.
  part('links');
  const origin = new URL(baseUrl).origin;
  const resolveLink = async (link) => {
    const target = new URL(link.href);
    const targetKey = pageKey(target.pathname);
    let targetInfo = visited.get(targetKey);
    if (!targetInfo) {
      const response = await fetch(`${baseUrl}${target.pathname}`, { method: 'HEAD', signal: AbortSignal.timeout(STEP_TIMEOUT_MS) });
      const looksLikePage = !path.extname(targetKey) || target.pathname.endsWith('.html');
      targetInfo = response.ok && looksLikePage && target.hash
        ? await visitPage(page, `${baseUrl}${target.pathname}`)
        : { ok: response.ok, status: response.status, ids: new Set() };
      visited.set(targetKey, { ...targetInfo, links: null });
    }
    if (!targetInfo.ok) return `"${link.text}" -> ${link.raw} (HTTP ${targetInfo.status})`;
    if (target.hash && target.hash !== '#') {
      const anchor = decodeURIComponent(target.hash.slice(1));
      if (!targetInfo.ids.has(anchor)) return `"${link.text}" -> ${link.raw} (no id "${anchor}" on ${targetKey})`;
    }
    return null;
  };
  const checkLinks = async (label, links) => {
    const broken = [];
    for (const link of links) {
      const problem = await resolveLink(link);
      if (problem) broken.push(problem);
    }
    if (broken.length) fail(`links ${label}: ${broken.length} broken: ${broken.slice(0, 5).join('; ')}`);
    else pass(`links ${label}: ${links.length} internal links and anchors resolve`);
  };
  const navigationLinks = new Map();
  for (const info of visited.values()) {
    for (const link of info.links ?? []) {
      if (link.navigation && new URL(link.href).origin === origin) navigationLinks.set(link.href.replace(/#$/, ''), link);
    }
  }
  await checkLinks('in the navigation bar and sidebar', [...navigationLinks.values()]);
  for (const [key, info] of [...visited]) {
    if (!info.links) continue;
    const contentLinks = info.links.filter((link) => !link.navigation && new URL(link.href).origin === origin);
    await checkLinks(`on ${key}`, contentLinks);
  }

  // 3. The QP state-machine explorer.
  part('explorer');
  const explorerKey = [...visited].find(([, info]) => info.hasExplorer)?.[0];
  if (!explorerKey) {
    fail('explorer: no page contains <QpExplorer /> (docs/queue-pairs.md should)');
  } else {
    await checkExplorer(page, `${baseUrl}${explorerKey}`, pageProblems);
    await checkExplorerOnPhone(page, `${baseUrl}${explorerKey}`);
  }

  // 3b. The trace viewer: every recorded trace the chapters show.
  part('traces');
  const tracePages = [...visited].filter(([, info]) => info.traceViewers > 0).map(([key]) => key);
  if (!tracePages.length) fail('trace viewer: no page contains <TraceViewer /> (docs/operations.md should)');
  const tracesStarted = Date.now();
  for (const key of tracePages) await checkTraceViewers(page, `${baseUrl}${key}`, pageProblems);
  console.log(`note trace viewers on ${tracePages.length} pages checked in ${((Date.now() - tracesStarted) / 1000).toFixed(1)} s`);
  if (tracePages.length && filteredAway === 0) fail('trace viewer: the QP filter hid nothing in any trace (no trace has two QPs)');
  if (tracePages.length) await checkTraceViewerOnPhone(page, baseUrl, tracePages[0]);

  // 3c. The rate-per-flow figures (docs/congestion.md).
  part('rates');
  const ratePages = [...visited].filter(([, info]) => info.rateTimelines > 0).map(([key]) => key);
  if (!ratePages.length) fail('rate figures: no page contains <RateTimeline /> (docs/congestion.md should)');
  else await checkRateTimelines(page, baseUrl, ratePages);

  // 4. Mermaid diagrams render to SVG; the reference tables (4a); diagrams at their size (4b).
  part('diagrams');
  const mermaidKey = [...visited].find(([, info]) => info.mermaidCount > 0)?.[0];
  if (!mermaidKey) {
    skip('mermaid: no page has a ```mermaid block yet; nothing to check');
  } else {
    await checkMermaid(page, `${baseUrl}${mermaidKey}`, mermaidKey);
  }

  // 4a. The reference tables: the ibv_qp_attr tables show the explorer's
  // model cell for cell; the limits table lists every lesson.
  await checkReference(page, baseUrl, sources);

  // 4b. Diagrams read at their size, on a laptop and on a phone.
  const diagramPages = [...visited].filter(([, info]) => info.diagramCount > 0 || info.mermaidCount > 0).map(([key]) => key);
  if (!diagramPages.length) fail('diagrams: no page has a <SiteDiagram> or mermaid diagram');
  const measuredAt1280 = new Map([...visited].filter(([, info]) => info.diagrams).map(([key, info]) => [key, info.diagrams]));
  await checkDiagrams(page, baseUrl, diagramPages, 1280, measuredAt1280);
  part('phone');
  // 4c. On a phone, diagrams again, and every box wider than the screen says that it scrolls: one
  // visit a page for both (the two checks visited 13 and 35 pages, 97 s of the run, 2026-11-27).
  await checkPhone(page, baseUrl, diagramPages, ['/', ...courseChapters().map((chapter) => chapter.link)]);
  // 4d. An exercise's hints open one at a time, on a phone and on a laptop.
  part('hints');
  await checkHintsOneAtATime(page, baseUrl, { pass, fail, visitPage, waitForCondition });
  // 4e. The source download: on screen at both widths, and it answers.
  part('download');
  await checkSourceDownload(page, baseUrl, DIST_DIR, { pass, fail, skip, visitPage });

  // 5. Nothing was fetched from anywhere but this machine.
  part('network');
  if (outsideRequests.size) {
    fail(`network: ${outsideRequests.size} request(s) left 127.0.0.1: ${[...outsideRequests].slice(0, 5).join(', ')}`);
  } else {
    pass(`network: all ${requestCount} requests went to 127.0.0.1`);
  }

  if (options.screenshotsDir) await takeScreenshots(page, baseUrl, explorerKey, options.screenshotsDir, tracePages[0], tracePages, options.extraPages);
}

// light: the page is server-rendered whole (a complete-program page), so
// waiting for the network to go idle adds time and nothing to check.
async function visitPage(page, url, { light = false } = {}) {
  const response = await page.goto(url, { waitUntil: 'load', timeout: PAGE_TIMEOUT_MS });
  const status = response?.status() ?? 0;
  if (!response?.ok()) return { ok: false, status, ids: new Set(), links: [] };
  if (!light) await page.waitForLoadState('networkidle', { timeout: PAGE_TIMEOUT_MS }).catch(() => {});
  // VitePress hydrates the page; the app root gets Vue's __vue_app__ once mounted.
  await page.waitForFunction(() => document.querySelector('#app')?.__vue_app__ !== undefined, null, { timeout: STEP_TIMEOUT_MS })
    .catch(() => {});
  const heading = await page.locator('h1').first().textContent({ timeout: STEP_TIMEOUT_MS }).catch(() => null);
  return page.evaluate(({ status: httpStatus, headingText }) => {
    const ids = [...document.querySelectorAll('[id]')].map((element) => element.id);
    const names = [...document.querySelectorAll('a[name]')].map((element) => element.getAttribute('name'));
    const links = [...document.querySelectorAll('a[href]')]
      .map((a) => ({
        href: a.href,
        raw: a.getAttribute('href'),
        text: (a.textContent || '').trim().slice(0, 40),
        navigation: !!a.closest('.VPNav, .VPSidebar, .VPLocalNav, .VPSkipLink'),
      }))
      .filter((link) => /^https?:/.test(link.href));
    return {
      ok: true,
      status: httpStatus,
      heading: headingText ? headingText.replace(/\s+/g, ' ').replace(/\u200b/g, '').trim() : null,
      ids: [...ids, ...names],
      links,
      hasExplorer: !!document.querySelector('.qp-explorer'),
      traceViewers: document.querySelectorAll('.trace-viewer').length,
      brokenImages: [...document.querySelectorAll('.VPContent img')]
        .filter((img) => img.complete && img.naturalWidth === 0)
        .map((img) => img.getAttribute('src')),
      pendingFigures: [...document.querySelectorAll('.figure-pending')].map((note) => note.dataset.figure),
      mermaidCount: document.querySelectorAll('.mermaid').length,
      diagramCount: document.querySelectorAll('.site-diagram, .rate-timeline').length,
      rateTimelines: document.querySelectorAll('.rate-timeline').length,
      viewportWidth: window.innerWidth,
      overflowing: [
        ...[...document.querySelectorAll('.vp-doc div[class*="language-"] pre')].map((pre) => ({
          kind: 'code block', scroll: pre.scrollWidth, client: pre.clientWidth,
          text: (pre.textContent || '').split('\n').reduce((a, b) => (b.length > a.length ? b : a), '').trim().slice(0, 60),
        })),
        ...[...document.querySelectorAll('.vp-doc table')].map((table) => ({
          kind: 'table', scroll: table.scrollWidth, client: table.clientWidth,
          text: (table.querySelector('th, td')?.textContent || '').trim().slice(0, 40),
        })),
      ].filter((box) => box.scroll > box.client + 1),
      codeBlockCount: document.querySelectorAll('.vp-doc div[class*="language-"] pre').length,
      tableCount: document.querySelectorAll('.vp-doc table').length,
      importLabels: [...document.querySelectorAll('.vp-doc .code-source')].map((label) => ({
        id: label.id,
        file: label.querySelector('code')?.textContent ?? '',
        whole: label.querySelector('a.code-source-whole[href^="/source/"]')?.getAttribute('href') ?? null,
        followedByCode: !!label.nextElementSibling?.matches('div[class*="language-"]'),
      })),
      regionLabels: [...document.querySelectorAll('.vp-doc .source-region-label')].map((label) => label.id),
    };
  }, { status, headingText: heading }).then((info) => ({ ...info, ids: new Set(info.ids) }));
}

async function checkReference(page, baseUrl, sources) {
  try {
    await visitPage(page, `${baseUrl}/reference`);
    const shown = await page.evaluate(() => Object.fromEntries([...document.querySelectorAll('table.qp-attr-table')].map((table) => [
      table.dataset.transport,
      {
        transitions: [...table.querySelectorAll('thead th[data-transition]')].map((th) => th.dataset.transition),
        rows: [...table.querySelectorAll('tbody tr')].map((tr) => ({ bit: tr.dataset.bit, cells: [...tr.querySelectorAll('td[data-cell]')].map((td) => td.dataset.cell) })),
      },
    ])));
    const problems = [];
    let cells = 0;
    for (const transport of TRANSPORTS) {
      const model = attributeTable(transport);
      const table = shown[transport];
      if (!table) { problems.push(`no table for ${transport}`); continue; }
      const transitions = model.transitions.map((t) => `${t.from}>${t.to}`);
      if (JSON.stringify(table.transitions) !== JSON.stringify(transitions)) problems.push(`${transport}: columns ${table.transitions.join(',')}`);
      if (table.rows.length !== model.rows.length) problems.push(`${transport}: ${table.rows.length} rows, the model has ${model.rows.length}`);
      for (const row of model.rows) {
        const shownRow = table.rows.find((r) => r.bit === row.bit);
        if (!shownRow) { problems.push(`${transport}: no row for ${row.bit}`); continue; }
        row.cells.forEach((cell, i) => {
          cells += 1;
          if (shownRow.cells[i] !== cell) problems.push(`${transport} ${row.bit} ${transitions[i]}: shows "${shownRow.cells[i]}", the model says "${cell}"`);
        });
      }
    }
    const lessonsShown = await page.evaluate(() => [...document.querySelectorAll('#limits-per-lesson tbody tr')].map((tr) => tr.dataset.lesson));
    const lessons = sources.filter((source) => source.lesson).map((source) => source.slug);
    const missing = lessons.filter((lesson) => !lessonsShown.includes(lesson));
    if (missing.length) problems.push(`limits table lacks ${missing.join(', ')}`);
    const wrTables = await page.evaluate(() => [...document.querySelectorAll('#send-wr ~ table, #wc ~ table')].length);
    if (wrTables < 2) problems.push('the ibv_send_wr and ibv_wc tables are missing');
    if (problems.length) fail(`reference: ${problems.slice(0, 5).join('; ')}`);
    else pass(`reference: the ibv_qp_attr tables match the explorer's model in all ${cells} cells; the limits table lists all ${lessons.length} lessons`);
  } catch (error) {
    fail(`reference: ${error.message.split('\n')[0]}`);
  }
}

function checkFit(visited) {
  let blocks = 0;
  let tables = 0;
  const problems = [];
  for (const [key, info] of visited) {
    if (!info.overflowing || info.viewportWidth !== 1280) continue;
    blocks += info.codeBlockCount;
    tables += info.tableCount;
    for (const box of info.overflowing) problems.push(`${key}: ${box.kind} ${box.scroll} > ${box.client} px ("${box.text}")`);
  }
  if (blocks === 0) fail('fit at 1280 px: no code blocks measured');
  else if (problems.length) fail(`fit at 1280 px: ${problems.length} of ${blocks + tables} code blocks and tables scroll sideways: ${problems.slice(0, 6).join('; ')}`);
  else pass(`fit at 1280 px: none of ${blocks} code blocks and ${tables} tables on ${visited.size} pages scrolls sideways`);
}

function checkImportLabels(visited) {
  const imports = chapterImports();
  const problems = [];
  let labelled = 0;
  for (const chapter of CHAPTERS) {
    const info = visited.get(pageKey(chapter.link));
    if (!info?.importLabels) continue;
    const expected = imports.filter((entry) => entry.chapter.link === chapter.link);
    for (const entry of expected) {
      const label = info.importLabels.find((l) => l.file === entry.file && l.id && l.id.startsWith(`src-`) && l.whole?.endsWith(`#region-${entry.region}`));
      if (!label) problems.push(`${chapter.link}: ${entry.file}#${entry.region} has no label linking to its whole program`);
      else if (!label.followedByCode) problems.push(`${chapter.link}: the label of ${entry.file}#${entry.region} is not followed by its code`);
      else labelled += 1;
    }
  }
  if (!imports.length) fail('imported code: the chapters import no regions');
  else if (problems.length) fail(`imported code: ${problems.length} of ${imports.length} blocks unlabelled: ${problems.slice(0, 4).join('; ')}`);
  else pass(`imported code: all ${labelled} imported blocks name their file and region and link to the whole program`);
}

function checkSourcePages(visited, sources) {
  const problems = [];
  const lessons = sources.filter((source) => source.lesson);
  for (const source of sources) {
    const info = visited.get(pageKey(`/source/${source.slug}`));
    if (!info?.ok) {
      problems.push(`/source/${source.slug} (${source.file}) did not render`);
      continue;
    }
    const expected = source.regions.map((region) => `region-${region.name}`);
    const missing = expected.filter((id) => !info.regionLabels.includes(id));
    if (missing.length) problems.push(`/source/${source.slug}: regions not marked: ${missing.join(', ')}`);
  }
  if (lessons.length < 20) problems.push(`only ${lessons.length} lessons found under lessons/`);
  if (problems.length) fail(`complete programs: ${problems.slice(0, 4).join('; ')}`);
  else pass(`complete programs: all ${lessons.length} lessons and ${sources.length - lessons.length} other imported files have a page with every region marked`);
}

// Every piece of text in every diagram (site SVGs and mermaid) renders at 11
// px or more at this viewport width, and none sticks out of its box or of
// the drawing.
// Runs in the page: every piece of text in every diagram (site SVGs and
// mermaid) and whether it renders below 11 px or sticks out of its box or of
// the drawing. Returns { found: [problem], count, diagrams }.
function measureDiagramsInPage() {
  const found = [];
  let count = 0;
  const svgs = [...document.querySelectorAll('.vp-doc .site-diagram svg, .vp-doc .mermaid svg, .vp-doc .rate-timeline svg')];
  for (const svg of svgs) {
    const name = svg.closest('.site-diagram')?.dataset.diagram ?? (svg.closest('.rate-timeline') ? 'rate-timeline' : 'mermaid');
    const box = svg.getBoundingClientRect();
    const viewBox = svg.viewBox?.baseVal;
    const scale = viewBox && viewBox.width ? box.width / viewBox.width : 1;
    const labels = [
      ...[...svg.querySelectorAll('text')].map((el) => ({ el, html: false })),
      ...[...svg.querySelectorAll('foreignObject')].flatMap((fo) => [...fo.querySelectorAll('span, p, div')]
        .filter((el) => el.children.length === 0 && (el.textContent || '').trim())
        .map((el) => ({ el, html: true, fo }))),
    ];
    for (const { el, html, fo } of labels) {
      const text = (el.textContent || '').trim();
      if (!text) continue;
      count += 1;
      const size = parseFloat(getComputedStyle(el).fontSize) * scale;
      if (size < 11) found.push(`${name}: "${text.slice(0, 30)}" at ${size.toFixed(1)} px`);
      const r = el.getBoundingClientRect();
      if (html) {
        const f = fo.getBoundingClientRect();
        if (r.left < f.left - 1 || r.right > f.right + 1 || r.top < f.top - 1 || r.bottom > f.bottom + 1) found.push(`${name}: "${text.slice(0, 30)}" clipped by its label box`);
        continue;
      }
      if (r.left < box.left - 1 || r.right > box.right + 1 || r.top < box.top - 1 || r.bottom > box.bottom + 1) found.push(`${name}: "${text.slice(0, 30)}" outside the drawing`);
      const group = el.closest('g.box');
      const frame = group?.querySelector(':scope > rect');
      if (frame) {
        const b = el.getBBox();
        const fb = frame.getBBox();
        if (b.x < fb.x - 0.5 || b.x + b.width > fb.x + fb.width + 0.5 || b.y < fb.y - 0.5 || b.y + b.height > fb.y + fb.height + 0.5) {
          found.push(`${name}: "${text.slice(0, 30)}" sticks out of its box`);
        }
      }
    }
  }
  return { found, count, diagrams: svgs.length };
}

// The diagrams on one page, measured at the viewport's width: their labels' sizes and clipping,
// and whether the page scrolls sideways.
async function measureDiagrams(page, key, width) {
  await waitForCondition(page, `the diagrams on ${key} to render`, () => [...document.querySelectorAll('.mermaid')].every((block) => block.querySelector('svg')));
  const result = await page.evaluate(measureDiagramsInPage);
  const pageWidth = await page.evaluate(() => document.documentElement.scrollWidth);
  if (pageWidth > width) result.found.push(`the page scrolls sideways (${pageWidth} px)`);
  return result;
}

// Adds one page's measured diagrams to a pass's tally, each problem named by its page.
function addDiagrams(tally, key, result) {
  tally.texts += result.count;
  tally.diagrams += result.diagrams;
  tally.problems.push(...result.found.map((problem) => `${key} ${problem}`));
}

function reportDiagrams(width, pages, { texts, diagrams, problems }) {
  if (!texts) fail(`diagrams at ${width} px: no diagram text found`);
  else if (problems.length) fail(`diagrams at ${width} px: ${problems.length} problem(s): ${problems.slice(0, 6).join('; ')}`);
  else pass(`diagrams at ${width} px: ${texts} labels in ${diagrams} diagrams on ${pages} pages, none below 11 px or clipped`);
}

async function checkDiagrams(page, baseUrl, keys, width, measured = new Map()) {
  const tally = { texts: 0, diagrams: 0, problems: [] };
  try {
    await page.setViewportSize({ width, height: width > 800 ? 800 : 844 });
    for (const key of keys) {
      let result = measured.get(key);
      if (!result) {
        await visitPage(page, `${baseUrl}${key}`);
        result = await measureDiagrams(page, key, width);
      }
      addDiagrams(tally, key, result);
    }
    reportDiagrams(width, keys.length, tally);
  } catch (error) {
    fail(`diagrams at ${width} px: ${error.message.split('\n')[0]}`);
  } finally {
    await page.setViewportSize({ width: 1280, height: 800 });
  }
}

// The rate-per-flow figures (RateTimeline): every figure draws one solid line per recorded flow,
// a figure of the reaction's run also its dashed R_C lines, each line with points across the
// run, and axis numbers; the data come from bench/results at build time.
async function checkRateTimelines(page, baseUrl, keys) {
  for (const key of keys) {
    try {
      await visitPage(page, `${baseUrl}${key}`);
      const figures = await page.evaluate(() => [...document.querySelectorAll('.rate-timeline')].map((figure) => {
        const paths = [...figure.querySelectorAll('svg path')];
        return {
          solid: paths.filter((p) => !p.getAttribute('stroke-dasharray')).map((p) => (p.getAttribute('d').match(/L/g) || []).length),
          dashed: paths.filter((p) => p.getAttribute('stroke-dasharray')).length,
          ticks: figure.querySelectorAll('.rate-timeline-axis text').length,
          legend: figure.querySelectorAll('.rate-timeline-legend li').length,
        };
      }));
      const problems = [];
      figures.forEach((f, i) => {
        if (f.solid.length < 2) problems.push(`figure ${i + 1} draws ${f.solid.length} flow(s)`);
        if (f.solid.some((points) => points < 20)) problems.push(`figure ${i + 1} has a line of under 20 points`);
        if (f.dashed && f.dashed !== f.solid.length) problems.push(`figure ${i + 1}: ${f.dashed} dashed lines for ${f.solid.length} flows`);
        if (f.ticks < 6) problems.push(`figure ${i + 1} has ${f.ticks} axis labels`);
        if (f.legend !== f.solid.length + 1) problems.push(`figure ${i + 1}'s legend has ${f.legend} entries`);
      });
      if (!figures.some((f) => f.dashed > 0)) problems.push('no figure shows the reaction point\'s rate (dashed)');
      if (problems.length) fail(`rate figures on ${key}: ${problems.join('; ')}`);
      else pass(`rate figures on ${key}: ${figures.length} figures, ${figures.map((f) => f.solid.length).join('+')} flows drawn, R_C dashed where DCQCN ran`);
    } catch (error) {
      fail(`rate figures on ${key}: ${error.message.split('\n')[0]}`);
    }
  }
}

// At 390 px, in one visit a page: the diagrams (diagramKeys) as checkDiagrams measures them, and on
// cueLinks every box wider than the screen saying that it scrolls (theme/scroll-cues.js marks them
// 150 ms after the page settles: the check waits up to 2 s for the marks, then measures).
async function checkPhone(page, baseUrl, diagramKeys, cueLinks) {
  const width = 390;
  const diagramTally = { texts: 0, diagrams: 0, problems: [] };
  const cueProblems = [];
  let wide = 0;
  let diagramsDone = false;
  try {
    await page.setViewportSize({ width, height: 844 });
    for (const key of [...new Set([...cueLinks, ...diagramKeys])]) {
      await visitPage(page, `${baseUrl}${key}`);
      if (diagramKeys.includes(key)) addDiagrams(diagramTally, key, await measureDiagrams(page, key, width));
      if (cueLinks.includes(key)) {
        await page.waitForFunction(`(${scrollCuesInPage})().problems.length === 0`, null, { timeout: 2000 }).catch(() => {});
        const result = await page.evaluate(scrollCuesInPage);
        wide += result.wide;
        cueProblems.push(...result.problems.map((problem) => `${key} ${problem}`));
      }
    }
    reportDiagrams(width, diagramKeys.length, diagramTally);
    diagramsDone = true;
    if (!wide) fail('scroll cues at 390 px: no box wider than the screen found (the check measured nothing)');
    else if (cueProblems.length) fail(`scroll cues at 390 px: ${cueProblems.length} of ${wide} wide boxes give no sign: ${cueProblems.slice(0, 6).join('; ')}`);
    else pass(`scroll cues at 390 px: all ${wide} boxes wider than the screen on ${cueLinks.length} pages say that they scroll`);
  } catch (error) {
    if (!diagramsDone) fail(`diagrams at ${width} px: ${error.message.split('\n')[0]}`);
    fail(`scroll cues at 390 px: ${error.message.split('\n')[0]}`);
  } finally {
    await page.setViewportSize({ width: 1280, height: 800 });
  }
}

async function waitForCondition(page, description, predicate, argument) {
  try {
    await page.waitForFunction(predicate, argument, { timeout: STEP_TIMEOUT_MS });
    return true;
  } catch {
    throw new Error(`timed out after ${STEP_TIMEOUT_MS / 1000} s waiting for ${description}`);
  }
}

async function checkExplorer(page, url, pageProblems) {
  pageProblems.length = 0;
  const where = new URL(url).pathname;
  try {
    await visitPage(page, url);
    const explorer = page.locator('.qp-explorer').first();
    await explorer.scrollIntoViewIfNeeded();
    const state = () => explorer.getAttribute('data-qp-state');
    if (await state() !== 'RESET') throw new Error(`starts in ${await state()}, not RESET`);

    // An illegal transition: explained, state unchanged.
    await explorer.locator('[data-state="RTR"]').click();
    await waitForCondition(page, 'an explanation of RESET→RTR', () => {
      const result = document.querySelector('.qp-explorer .qp-result');
      return result?.dataset.result === 'illegal' && /pass through INIT/.test(result.textContent);
    });
    if (await state() !== 'RESET') throw new Error('an illegal click changed the state');
    pass(`explorer on ${where}: clicking RTR from RESET explains why it fails (EINVAL), state stays RESET`);

    // A legal one: state changes, required mask shown.
    await explorer.locator('[data-state="INIT"]').click();
    await waitForCondition(page, 'RESET→INIT to be performed', () => {
      const root = document.querySelector('.qp-explorer');
      return root?.dataset.qpState === 'INIT'
        && /IBV_QP_ACCESS_FLAGS/.test(root.querySelector('.qp-mask')?.textContent ?? '');
    });
    await explorer.locator('[data-state="RTR"]').click();
    await waitForCondition(page, 'INIT→RTR with the RC mask', () => {
      const root = document.querySelector('.qp-explorer');
      return root?.dataset.qpState === 'RTR'
        && /IBV_QP_MAX_DEST_RD_ATOMIC/.test(root.querySelector('.qp-mask')?.textContent ?? '');
    });
    pass(`explorer on ${where}: RESET→INIT→RTR on RC performed, masks with IBV_QP_ACCESS_FLAGS and IBV_QP_MAX_DEST_RD_ATOMIC shown`);

    // Another transport: a new QP, UD's own mask.
    await explorer.locator('[data-transport-button="UD"]').click();
    await waitForCondition(page, 'a new UD QP in RESET', () => {
      const root = document.querySelector('.qp-explorer');
      return root?.dataset.transport === 'UD' && root.dataset.qpState === 'RESET';
    });
    await explorer.locator('[data-next="INIT"]').click();
    await waitForCondition(page, 'RESET→INIT on UD with IBV_QP_QKEY', () => {
      const root = document.querySelector('.qp-explorer');
      return root?.dataset.qpState === 'INIT' && /IBV_QP_QKEY/.test(root.querySelector('.qp-mask')?.textContent ?? '');
    });
    pass(`explorer on ${where}: UD selected, RESET→INIT requires IBV_QP_QKEY`);
    if (pageProblems.length) fail(`explorer on ${where}: ${pageProblems.slice(0, 3).join(' | ')}`);
  } catch (error) {
    fail(`explorer on ${where}: ${error.message.split('\n')[0]}`);
  }
}

async function checkExplorerOnPhone(page, url) {
  const where = new URL(url).pathname;
  try {
    await page.setViewportSize({ width: 390, height: 844 });
    await visitPage(page, url);
    const explorer = page.locator('.qp-explorer').first();
    await explorer.scrollIntoViewIfNeeded();
    const layout = await page.evaluate(() => {
      const root = document.querySelector('.qp-explorer');
      const box = root.getBoundingClientRect();
      const diagram = root.querySelector('.qp-diagram').getBoundingClientRect();
      const controls = [...root.querySelectorAll('button')].map((b) => b.getBoundingClientRect());
      return {
        pageWidth: document.documentElement.scrollWidth,
        left: box.left,
        right: box.right,
        diagramWidth: diagram.width,
        controlsInside: controls.every((b) => b.left >= box.left - 1 && b.right <= box.right + 1),
      };
    });
    const problems = [];
    if (layout.pageWidth > 390) problems.push(`page scrolls sideways (${layout.pageWidth} px wide)`);
    if (layout.left < 0 || layout.right > 390) problems.push(`explorer spans ${Math.round(layout.left)}..${Math.round(layout.right)} px`);
    if (layout.diagramWidth < 300) problems.push(`diagram only ${Math.round(layout.diagramWidth)} px wide`);
    if (!layout.controlsInside) problems.push('a button sticks out of the explorer');
    await explorer.locator('[data-state="INIT"]').click();
    await waitForCondition(page, 'a tap on INIT to work on a phone', () => document.querySelector('.qp-explorer')?.dataset.qpState === 'INIT');
    if (problems.length) fail(`explorer on a 390x844 phone: ${problems.join('; ')}`);
    else pass(`explorer on a 390x844 phone: fits (diagram ${Math.round(layout.diagramWidth)} px wide), no sideways scrolling, taps work`);
  } catch (error) {
    fail(`explorer on a 390x844 phone: ${error.message.split('\n')[0]}`);
  } finally {
    await page.setViewportSize({ width: 1280, height: 800 });
  }
}

// The trace viewer on one page: each recorded trace loads without console errors; stepping
// walks the file's timeline in order, and the whole ladder at the end is in that order; there is
// one arrow per packet in the file; NAKs, packets sent again, lost packets, error completions and
// unsignaled WRs are marked exactly where the file has them (and the loss, link-failure and
// selective-signaling traces must have theirs); the QP filter hides every other QP's events;
// clicking a packet shows its PSN and opcode; a foreign or malformed file gets a message.
const STEPS_CLICKED = 12;  // each a click; the rest of the order is read off the ladder at the end
let filteredAway = 0;  // packets the QP filter hid, over every trace
const viewersSeen = [];  // { key, nth, src, steps, hosts } of every trace viewer checked
const LONG_TRACE_STEPS = 100;  // a ladder this long is stepped through to its middle at 1280 px
// What each recorded trace is there to show: marks it must have (at least one).
const TRACE_MUST_SHOW = {
  'loss-and-retransmission.json': ['nak', 'again'],
  'link-failure.json': ['error', 'again', 'nak'],
  'selective-signaling.json': ['unsignaled'],
};
function traceMarks(trace) {
  return {
    nak: trace.packets.filter((p) => p.aeth && p.aeth.syndrome >= 32).length,
    again: trace.packets.filter((p) => p.sent_again).length,
    lost: trace.packets.filter((p) => p.lost).length,
    error: trace.events.filter((e) => e.event === 'completion' && !e.ok).length,
    unsignaled: trace.events.filter((e) => e.event === 'post_send' && e.signaled === false).length,
  };
}
async function checkTraceViewers(page, url, pageProblems) {
  const where = new URL(url).pathname;
  pageProblems.length = 0;
  try {
    await visitPage(page, url);
    const count = await page.locator('.trace-viewer').count();
    for (let v = 0; v < count; v += 1) {
      const viewer = page.locator('.trace-viewer').nth(v);
      await viewer.scrollIntoViewIfNeeded();
      await waitForCondition(page, 'the trace to load', (i) => {
        const root = document.querySelectorAll('.trace-viewer')[i];
        return root?.dataset.loaded || root?.querySelector('.tv-problem');
      }, v);
      const src = await viewer.getAttribute('data-src');
      const problem = await viewer.locator('.tv-problem').count();
      if (problem) throw new Error(`${src}: ${await viewer.locator('.tv-problem').textContent()}`);
      const trace = JSON.parse(await readFile(path.join(DIST_DIR, src), 'utf8'));
      const name = `${where} ${src}`;
      viewersSeen.push({ key: where, nth: v, src, steps: trace.timeline.length, hosts: trace.hosts.length });

      // It opens on the first operation posted (the set-up before it done), not on an empty box.
      const firstPost = trace.timeline.findIndex((s) => s.kind === 'event' && trace.events[s.index].event === 'post_send');
      const opened = Number(await viewer.getAttribute('data-position'));
      if (firstPost >= 0 && opened !== firstPost + 1) throw new Error(`${src}: opens on step ${opened}, not on the first operation (step ${firstPost + 1})`);
      await viewer.locator('[data-action="start"]').click();
      // Step through the first steps: the viewer's current step is the file's next timeline entry.
      const clicked = Math.min(trace.timeline.length, STEPS_CLICKED);
      const seen = [];
      for (let i = 0; i < clicked; i += 1) {
        await viewer.locator('[data-action="forward"]').click();
        seen.push(await viewer.evaluate((root) => [root.dataset.stepKind, Number(root.dataset.stepIndex), Number(root.dataset.stepT)]));
      }
      const expected = trace.timeline.map((s) => [s.kind, s.index, s.t_ns]);
      const firstDifference = expected.slice(0, clicked).findIndex((e, i) => JSON.stringify(e) !== JSON.stringify(seen[i]));
      const ordered = seen.every((s, i) => i === 0 || s[2] >= seen[i - 1][2]);
      if (firstDifference >= 0 || !ordered) throw new Error(`${src}: step ${firstDifference + 1} shows ${JSON.stringify(seen[firstDifference])}, the file says ${JSON.stringify(expected[firstDifference])}`);
      // Then End: every row of the ladder is the file's timeline entry of that row.
      await viewer.locator('[data-action="end"]').click();
      const drawn = await viewer.evaluate((root) => [...root.querySelectorAll('[data-row]')]
        .map((g) => [g.dataset.event !== undefined ? 'event' : 'packet', Number(g.dataset.row), Number(g.dataset.event ?? g.dataset.packet)])
        .sort((a, b) => a[1] - b[1]));
      const rows = trace.timeline.map((s, i) => [s.kind === 'event' ? 'event' : 'packet', i, s.index, s])
        .filter(([, , index, s]) => s.kind === 'event' || s.kind === 'send' || (s.kind === 'arrive' && trace.packets[index].tx_ns === null))
        .map(([kind, i, index]) => [kind, i, index]);
      if (JSON.stringify(drawn) !== JSON.stringify(rows)) {
        const at = rows.findIndex((r, i) => JSON.stringify(r) !== JSON.stringify(drawn[i]));
        throw new Error(`${src}: at the end, row ${at} of the ladder is ${JSON.stringify(drawn[at])}, the file's timeline says ${JSON.stringify(rows[at])}`);
      }
      const position = Number(await viewer.getAttribute('data-position'));
      if (position !== trace.timeline.length) throw new Error(`${src}: End shows step ${position} of ${trace.timeline.length}`);
      pass(`trace viewer on ${name}: ${clicked} steps forward follow the file's timeline, and all ${trace.timeline.length} steps at the end sit in its order`);

      const arrows = await viewer.locator('.tv-packet').count();
      if (arrows !== trace.packets.length) throw new Error(`${src}: ${arrows} packet arrows for ${trace.packets.length} packets in the file`);
      await viewer.locator('[data-action="back"]').click();
      const back = await viewer.evaluate((root) => [root.dataset.stepKind, Number(root.dataset.stepIndex)]);
      const penultimate = trace.timeline[trace.timeline.length - 2];
      if (back[0] !== penultimate.kind || back[1] !== penultimate.index) throw new Error(`${src}: a step back shows ${back}, not the step before the last`);
      pass(`trace viewer on ${name}: ${arrows} packet arrows = the ${trace.packets.length} packets in the file; a step back goes to the step before`);

      // The marks: as many as the file has of each, each labelled; the ones this trace is for.
      await viewer.locator('[data-action="end"]').click();
      const marks = traceMarks(trace);
      const shown = await viewer.evaluate((root) => {
        const texts = (selector) => [...root.querySelectorAll(selector)].map((g) => g.querySelector('text')?.textContent ?? '');
        return { nak: texts('[data-nak]'), again: texts('[data-again]'), lost: texts('[data-lost]'), error: texts('[data-error]'), unsignaled: texts('[data-unsignaled]'), legend: root.querySelector('[data-legend]')?.textContent ?? '' };
      });
      const words = { nak: /NAK/, again: /sent again/, lost: /lost/, error: /CQE ✗ /, unsignaled: /no CQE/ };
      const legendWords = { nak: 'NAK', again: 'sent again', lost: 'lost', error: 'error completion', unsignaled: 'unsignaled WR' };
      for (const kind of Object.keys(words)) {
        if (shown[kind].length !== marks[kind]) throw new Error(`${src}: ${shown[kind].length} marked ${kind}, the file has ${marks[kind]}`);
        const unlabelled = shown[kind].find((text) => !words[kind].test(text));
        if (unlabelled !== undefined) throw new Error(`${src}: a ${kind} mark's label "${unlabelled}" does not say so`);
        if (marks[kind] > 0 && !shown.legend.includes(legendWords[kind])) throw new Error(`${src}: the key does not explain the ${kind} marks`);
      }
      for (const kind of TRACE_MUST_SHOW[src.split('/').pop()] ?? []) {
        if (!marks[kind]) throw new Error(`${src}: this trace is here to show ${kind} marks, and has none (record it again: trace/site-traces.sh)`);
      }
      if (marks.unsignaled) {
        const completed = trace.events.filter((e) => e.event === 'post_send' && e.signaled === false && e.completion !== undefined);
        if (completed.length) throw new Error(`${src}: unsignaled WR ${completed[0].wr_id} has a completion`);
      }
      if (marks.error && !shown.error.some((text) => /ERR/.test(text))) throw new Error(`${src}: no error completion names its status`);
      pass(`trace viewer on ${name}: marked as in the file: ${Object.entries(marks).map(([k, n]) => `${n} ${k}`).join(', ')}`);
      const cmLabels = await checkCmLabels(viewer, trace, src);  // the ladder still at its end
      if (cmLabels) pass(`trace viewer on ${name}: ${cmLabels}`);
      pass(`trace viewer on ${name}: ${await checkJumps(viewer, trace, src)}`);
      if (trace.timeline.length >= LONG_TRACE_STEPS) pass(`trace viewer on ${name}: ${await checkLanesInView(viewer, src, 1280)}`);

      if (trace.hosts.length > 2) {
        filteredAway += await checkManyHosts(viewer, trace, src, name);
      } else {
        // The QP filter: the QP of the first data packet; every other QP's packets and events go.
        const qp = parseInt(trace.packets.find((p) => p.qpn !== '0x000001')?.qpn ?? '0x1', 16);
        await viewer.locator('[data-control="qp"]').selectOption(String(qp));
        await viewer.locator('[data-action="end"]').click();
        const keep = (s) => {
          if (s.kind === 'event') {
            const e = trace.events[s.index];
            return e.qp_num === undefined || e.qp_num === qp || e.dest_qp === qp;
          }
          return parseInt(trace.packets[s.index].qpn, 16) === qp;
        };
        const wantedSteps = trace.timeline.filter(keep).length;
        const wantedPackets = trace.packets.filter((p) => parseInt(p.qpn, 16) === qp).length;
        const filtered = await viewer.evaluate((root) => ({
          steps: Number(root.dataset.steps),
          packets: root.querySelectorAll('.tv-packet').length,
          events: [...root.querySelectorAll('[data-event]')].map((g) => Number(g.dataset.event)),
        }));
        const stray = filtered.events.find((i) => !keep({ kind: 'event', index: i }));
        if (filtered.steps !== wantedSteps || filtered.packets !== wantedPackets || stray !== undefined) {
          throw new Error(`${src}: QP ${qp} shows ${filtered.steps} steps and ${filtered.packets} packets (the file: ${wantedSteps}, ${wantedPackets})${stray !== undefined ? `, and event ${stray} of another QP` : ''}`);
        }
        filteredAway += trace.packets.length - wantedPackets;
        await viewer.locator('[data-control="qp"]').selectOption('all');
        pass(`trace viewer on ${name}: QP ${qp} alone: ${wantedSteps} of ${trace.timeline.length} steps, ${wantedPackets} of ${trace.packets.length} packets`);
      }

      // Click the first data packet: its PSN and opcode in the details.
      const index = trace.packets.findIndex((p) => p.qpn !== '0x000001' && p.tx_ns !== null);
      const packet = trace.packets[index];
      await viewer.locator(`[data-packet="${index}"] .tv-plabel`).click();
      const details = await viewer.locator('[data-details]').textContent();
      if (!details.includes(`PSN${packet.psn}`) && !details.includes(`PSN ${packet.psn}`)) throw new Error(`${src}: the details of packet ${index} lack PSN ${packet.psn}: ${details.slice(0, 120)}`);
      if (!details.includes(packet.opcode_name)) throw new Error(`${src}: the details of packet ${index} lack "${packet.opcode_name}"`);
      pass(`trace viewer on ${name}: clicking ${packet.opcode_name} PSN ${packet.psn} shows its BTH (opcode, PSN)`);
    }

    // A reader's own file: a foreign JSON and a file that is not JSON get a message.
    const viewer = page.locator('.trace-viewer').first();
    const input = viewer.locator('[data-control="file"]');
    for (const [file, text, words] of [['foreign.json', '{"records": []}', /not a trace this viewer can play: its "format"/],
      ['broken.json', '{"format": "rdmalab-trace", ', /not a trace this viewer can play: it is not JSON/],
      ['old.json', '{"format": "rdmalab-trace", "version": 7}', /version 7/],
      ['old-packets.json', '{"format": "rdmalab-trace", "version": 2, "packet_schema_version": 0, "hosts": [], "events": [], "packets": [], "timeline": []}', /its packets are schema version 0/],
      ['bad-packet.json', '{"format": "rdmalab-trace", "version": 2, "packet_schema_version": 1, "hosts": [], "events": [], "packets": [{"src": "198.51.100.1"}], "timeline": []}', /its packet 0 has no "/]]) {
      await input.setInputFiles({ name: file, mimeType: 'application/json', buffer: Buffer.from(text) });
      await waitForCondition(page, `a message about ${file}`, (name) => (document.querySelector('.trace-viewer .tv-problem')?.textContent ?? '').includes(name), file);
      const message = await viewer.locator('.tv-problem').textContent();
      if (!words.test(message)) throw new Error(`${file}: the message "${message}" does not say why`);
    }
    pass(`trace viewer on ${where}: a foreign, a broken and a newer file, and packets of another schema or missing a field, each get a message in the page`);
    if (pageProblems.length) fail(`trace viewer on ${where}: ${pageProblems.slice(0, 3).join(' | ')}`);
    else pass(`trace viewer on ${where}: no console or page errors`);
  } catch (error) {
    fail(`trace viewer on ${where}: ${error.message.split('\n')[0]}`);
  }
}

// A trace of three hosts or more (./rdmalab trace --ranks N): a lifeline per host, named, each
// packet's arrow from its sender's line to its receiver's; the link filter keeps one pair of
// hosts: the packets between them and the events of the QPs that connect them.
async function checkManyHosts(viewer, trace, src, name) {
  await viewer.locator('[data-action="end"]').click();
  const drawn = await viewer.evaluate((root) => ({
    columns: Object.fromEntries([...root.querySelectorAll('[data-column]')].map((t) => [t.dataset.column, Number(t.getAttribute('x'))])),
    arrows: [...root.querySelectorAll('.tv-packet')].map((g) => {
      const line = g.querySelector('.tv-arrow');
      return [Number(g.dataset.packet), Number(line.getAttribute('x1')), Number(line.getAttribute('x2'))];
    }),
  }));
  const names = trace.hosts.map((h) => h.name);
  if (JSON.stringify(Object.keys(drawn.columns)) !== JSON.stringify(names)) throw new Error(`${src}: lifelines for ${Object.keys(drawn.columns).join(', ')}, the file's hosts are ${names.join(', ')}`);
  if (new Set(Object.values(drawn.columns)).size !== names.length) throw new Error(`${src}: two hosts share a lifeline`);
  const astray = drawn.arrows.find(([i, x1, x2]) => {
    const p = trace.packets[i];
    return (p.tx_ns !== null && x1 !== drawn.columns[p.from]) || (!p.lost && x2 !== drawn.columns[p.to]);
  });
  if (astray) throw new Error(`${src}: packet ${astray[0]}'s arrow runs from x ${astray[1]} to ${astray[2]}, not from ${trace.packets[astray[0]].from}'s line to ${trace.packets[astray[0]].to}'s`);
  pass(`trace viewer on ${name}: ${names.length} hosts, a lifeline each; all ${drawn.arrows.length} arrows run from the sender's line to the receiver's`);

  const first = trace.packets.find((p) => p.qpn !== '0x000001');
  const pair = [first.from, first.to].sort((a, b) => names.indexOf(a) - names.indexOf(b));
  const peerOf = new Map(trace.packets.map((p) => [`${p.to}/${parseInt(p.qpn, 16)}`, p.from]));
  const keep = (s) => {
    if (s.kind !== 'event') {
      const p = trace.packets[s.index];
      return pair.includes(p.from) && pair.includes(p.to);
    }
    const e = trace.events[s.index];
    return pair.includes(e.host) && (e.qp_num === undefined || pair.includes(peerOf.get(`${e.host}/${e.qp_num}`)));
  };
  await viewer.locator('[data-control="link"]').selectOption(`link:${pair.join('|')}`);
  await viewer.locator('[data-action="end"]').click();
  const wantedSteps = trace.timeline.filter(keep).length;
  const wantedPackets = trace.packets.filter((p) => pair.includes(p.from) && pair.includes(p.to)).length;
  const filtered = await viewer.evaluate((root) => ({
    steps: Number(root.dataset.steps),
    packets: [...root.querySelectorAll('.tv-packet')].map((g) => Number(g.dataset.packet)),
    events: [...root.querySelectorAll('[data-event]')].map((g) => Number(g.dataset.event)),
  }));
  const stray = filtered.events.find((i) => !keep({ kind: 'event', index: i }));
  const strayPacket = filtered.packets.find((i) => !keep({ kind: 'send', index: i }));
  if (filtered.steps !== wantedSteps || filtered.packets.length !== wantedPackets || stray !== undefined || strayPacket !== undefined) {
    throw new Error(`${src}: link ${pair.join(' ↔ ')} shows ${filtered.steps} steps and ${filtered.packets.length} packets (the file: ${wantedSteps}, ${wantedPackets})${stray !== undefined ? `, and event ${stray} of another link` : ''}`);
  }
  if (wantedPackets === trace.packets.length) throw new Error(`${src}: link ${pair.join(' ↔ ')} carries every packet: the filter was not tested`);
  await viewer.locator('[data-control="link"]').selectOption('all');
  pass(`trace viewer on ${name}: link ${pair.join(' ↔ ')} alone: ${wantedSteps} of ${trace.timeline.length} steps, ${wantedPackets} of ${trace.packets.length} packets, both directions`);
  return trace.packets.length - wantedPackets;
}

// On a 390x844 phone: the viewer fits the page; two lanes side by side, on a two-host trace
// (the first page's first) and on the longest trace of three hosts or more, stepped to its middle
// (browser-traces.mjs).
async function checkTraceViewerOnPhone(page, baseUrl, key) {
  const url = `${baseUrl}${key}`;
  const where = new URL(url).pathname;
  try {
    await page.setViewportSize({ width: 390, height: 844 });
    await visitPage(page, url);
    const viewer = page.locator('.trace-viewer').first();
    await viewer.scrollIntoViewIfNeeded();
    await waitForCondition(page, 'the trace to load on a phone', () => document.querySelector('.trace-viewer')?.dataset.loaded);
    await viewer.locator('[data-action="end"]').click();
    const layout = await page.evaluate(() => {
      const root = document.querySelector('.trace-viewer');
      const box = root.getBoundingClientRect();
      const controls = [...root.querySelectorAll('button, select, input')].map((b) => b.getBoundingClientRect());
      return {
        pageWidth: document.documentElement.scrollWidth,
        left: box.left,
        right: box.right,
        controlsInside: controls.every((b) => b.left >= box.left - 1 && b.right <= box.right + 1),
      };
    });
    const problems = [];
    if (layout.pageWidth > 390) problems.push(`page scrolls sideways (${layout.pageWidth} px wide)`);
    if (layout.left < 0 || layout.right > 390) problems.push(`viewer spans ${Math.round(layout.left)}..${Math.round(layout.right)} px`);
    if (!layout.controlsInside) problems.push('a control sticks out of the viewer');
    if (problems.length) fail(`trace viewer on a 390x844 phone (${where}): ${problems.join('; ')}`);
    else pass(`trace viewer on a 390x844 phone (${where}): fits, the ladder scrolls inside its frame`);
    const first = viewersSeen.find((v) => v.key === where && v.nth === 0);
    const longest = viewersSeen.filter((v) => v.hosts > 2).sort((a, b) => b.steps - a.steps)[0];
    for (const [what, seen] of [[`the first trace on ${where}`, first], ['a trace of three hosts or more', longest]]) {
      if (!seen) {
        fail(`trace viewer on a 390x844 phone: ${what} was not checked at 1280 px, so not here either`);
        continue;
      }
      await visitPage(page, `${baseUrl}${seen.key}`);
      const viewer = page.locator('.trace-viewer').nth(seen.nth);
      await waitForCondition(page, `${seen.src} to load on a phone`, (i) => document.querySelectorAll('.trace-viewer')[i]?.dataset.loaded, seen.nth);
      const trace = JSON.parse(await readFile(path.join(DIST_DIR, seen.src), 'utf8'));
      pass(`trace viewer on a 390x844 phone (${seen.key}): ${await checkTwoLanesOnPhone(viewer, trace, seen.src)}`);
    }
  } catch (error) {
    fail(`trace viewer on a 390x844 phone (${where}): ${error.message.split('\n')[0]}`);
  } finally {
    await page.setViewportSize({ width: 1280, height: 800 });
  }
}
async function checkMermaid(page, url, where) {
  try {
    await visitPage(page, url);
    await waitForCondition(page, 'every mermaid block to become an <svg>', () => {
      const blocks = [...document.querySelectorAll('.mermaid')];
      return blocks.length > 0 && blocks.every((block) => block.querySelector('svg'));
    });
    const count = await page.locator('.mermaid svg').count();
    pass(`mermaid on ${where}: ${count} diagram(s) rendered to <svg>`);
  } catch (error) {
    fail(`mermaid on ${where}: ${error.message.split('\n')[0]}`);
  }
}

async function takeScreenshots(page, baseUrl, explorerKey, directory, tracePage, tracePages = [], wholePages = []) {
  await mkdir(directory, { recursive: true });
  for (const [width, height] of [[1280, 800], [390, 844]]) {
    const size = `${width}x${height}`;
    try {
      await page.setViewportSize({ width, height });
      await visitPage(page, `${baseUrl}/`);
      const homeFile = path.join(directory, `home-${size}.png`);
      await page.screenshot({ path: homeFile, timeout: STEP_TIMEOUT_MS });
      pass(`screenshot ${homeFile}`);
      if (!explorerKey) continue;
      await visitPage(page, `${baseUrl}${explorerKey}`);
      const explorer = page.locator('.qp-explorer').first();
      await explorer.locator('[data-state="INIT"]').click();
      await page.evaluate(() => document.querySelector('.qp-explorer').scrollIntoView({ block: 'start' }));
      await page.waitForTimeout(300);
      const explorerFile = path.join(directory, `explorer-${size}.png`);
      await page.screenshot({ path: explorerFile, timeout: STEP_TIMEOUT_MS });
      const explorerFullFile = path.join(directory, `explorer-whole-${size}.png`);
      await explorer.screenshot({ path: explorerFullFile, timeout: STEP_TIMEOUT_MS });
      pass(`screenshot ${explorerFile} and ${explorerFullFile}`);
      if (tracePage) {
        // The trace viewer part-way through its run, a WRITE packet selected.
        await visitPage(page, `${baseUrl}${tracePage}`);
        const viewer = page.locator('.trace-viewer').first();
        await page.waitForFunction(() => document.querySelector('.trace-viewer')?.dataset.loaded);
        for (let i = 0; i < 22; i += 1) await viewer.locator('[data-action="forward"]').click();
        await page.evaluate(() => document.querySelector('.trace-viewer').scrollIntoView({ block: 'start' }));
        await page.waitForTimeout(300);
        const traceFile = path.join(directory, `trace-viewer-${size}.png`);
        await viewer.screenshot({ path: traceFile, timeout: STEP_TIMEOUT_MS });
        pass(`screenshot ${traceFile}`);
      }
      // Every recorded trace at its end, its ladder scrolled to the first NAK, error completion
      // or unsignaled WR when it has one (trace-NAME-SIZE.png).
      let traceShots = 0;
      for (const key of tracePages) {
        await visitPage(page, `${baseUrl}${key}`);
        const viewers = page.locator('.trace-viewer');
        for (let v = 0; v < await viewers.count(); v += 1) {
          const viewer = viewers.nth(v);
          await page.waitForFunction((i) => document.querySelectorAll('.trace-viewer')[i]?.dataset.loaded, v);
          await viewer.locator('[data-action="end"]').click();
          await viewer.evaluate((root) => {
            root.scrollIntoView({ block: 'start' });
            const mark = root.querySelector('[data-nak], [data-error], [data-unsignaled]');
            const frame = root.querySelector('.tv-frame');
            if (frame) frame.scrollTop = mark ? Math.max(0, mark.getBBox().y - 120) : 0;
          });
          await page.waitForTimeout(200);
          const name = (await viewer.getAttribute('data-src')).split('/').pop().replace(/\.json$/, '');
          await viewer.screenshot({ path: path.join(directory, `trace-${name}-${size}.png`), timeout: STEP_TIMEOUT_MS });
          traceShots += 1;
        }
      }
      if (traceShots) pass(`screenshots of ${traceShots} recorded traces at their end at ${size}`);
      // Every chapter's first screen, and every diagram whole.
      let shots = 0;
      for (const chapter of CHAPTERS) {
        await visitPage(page, `${baseUrl}${chapter.link}`);
        const name = chapter.link === '/' ? 'home' : chapter.link.slice(1);
        await page.screenshot({ path: path.join(directory, `page-${name}-${size}.png`), timeout: STEP_TIMEOUT_MS });
        shots += 1;
        const diagrams = page.locator('.site-diagram');
        for (let i = 0; i < await diagrams.count(); i += 1) {
          const diagramName = await diagrams.nth(i).getAttribute('data-diagram');
          await diagrams.nth(i).screenshot({ path: path.join(directory, `diagram-${diagramName}-${size}.png`), timeout: STEP_TIMEOUT_MS });
          shots += 1;
        }
      }
      pass(`screenshots of ${CHAPTERS.length} chapters and their diagrams at ${size} (${shots} files)`);
      // The pages named with --page, whole, top to bottom (whole-NAME-SIZE.png).
      for (const link of wholePages) {
        await visitPage(page, `${baseUrl}${link}`);
        const name = link === '/' ? 'home' : link.replace(/^\//, '').replace(/\//g, '-');
        await page.screenshot({ path: path.join(directory, `whole-${name}-${size}.png`), fullPage: true, timeout: 30_000 });
      }
      if (wholePages.length) pass(`screenshots of ${wholePages.length} whole page(s) at ${size}`);
    } catch (error) {
      fail(`screenshots at ${size}: ${error.message.split('\n')[0]}`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

await main();
