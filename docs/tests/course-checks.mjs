// The course's checks, run by docs/tests/browser.mjs on the rendered pages: the home page is the
// door (the clone command or the source download, goals, the chapter list in the sidebar's order);
// the source download's link is on screen at 1280 and 390 px and answers; every chapter has goals,
// a summary and self-checks and fits ~12 screens at 1280 px; no excerpt is longer than 30 lines
// or shows a trace hook; every glossary term is linked at its first use in the prose; hello-rdma's
// page shows its build line and its output; at 390 px every box wider than the screen says so;
// the core path is marked in the sidebar and on the home page's course map, where every deep dive
// names what it needs; Getting started says what to do when the first run fails.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import { CHAPTERS } from '../.vitepress/chapters.mjs';
import { GLOSSARY } from '../.vitepress/glossary.mjs';
import { glossaryForms, glossaryPatternSource, linksGlossaryOn } from '../.vitepress/glossary-links.mjs';
import { MAX_EXCERPT_LINES } from '../.vitepress/sources.mjs';

export const SCREEN_PX = 800;
const GENERATED_TABLES = new Set(['/reference', '/results', '/verbs']);
export const MAX_SCREENS = 12;

// The chapters a reader works through: every page of the course's groups but the home page.
// Exercise and reference pages have shapes of their own.
export function courseChapters() {
  return CHAPTERS.filter((c) => c.link !== '/' && !['Exercises', 'Reference'].includes(c.group));
}

export function glossaryArguments() {
  return {
    pattern: glossaryPatternSource(GLOSSARY),
    ids: Object.fromEntries(glossaryForms(GLOSSARY).map(({ form, id }) => [form, id])),
  };
}

// Runs in the page. What the course checks need of it.
export function courseInfoInPage({ pattern, ids, linksGlossary, maxLines }) {
  const doc = document.querySelector('.vp-doc');
  if (!doc) return null;
  const firstH2 = doc.querySelector('h2');
  const goals = doc.querySelector('.chapter-goals');
  const selfCheck = doc.querySelector('h2#self-check');
  let questions = 0;
  for (let e = selfCheck?.nextElementSibling; e && e.tagName !== 'H2'; e = e.nextElementSibling) {
    if (e.matches('details')) questions += 1;
  }
  // Imported excerpts: the code block after each region label.
  const excerpts = [...doc.querySelectorAll('.code-source')]
    .filter((label) => label.querySelector('.code-source-region'))
    .map((label) => {
      const code = label.nextElementSibling?.querySelector('pre code');
      const lines = code ? code.querySelectorAll('.line').length : 0;
      return { region: label.querySelector('code')?.textContent + '#' + label.querySelector('.code-source-region code')?.textContent, lines, hook: /(^|\n)\s*trace::/.test(code?.textContent ?? '') };
    });
  // The glossary: the first use of each term in the prose, and whether it is the linked one.
  const skip = 'h1, h2, h3, h4, h5, h6, pre, code, summary, figure, svg, .code-source, .site-diagram, .trace-viewer, .qp-explorer, .course-map, .clone-command, .download-source, .scroll-cue, a:not(.glossary-term)';
  const regex = new RegExp(pattern, 'g');
  const firstUse = new Map();
  const walker = document.createTreeWalker(doc, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const parent = node.parentElement;
    if (!parent || parent.closest(skip)) continue;
    const linkedTo = parent.closest('a.glossary-term')?.getAttribute('href') ?? null;
    regex.lastIndex = 0;
    for (let match = regex.exec(node.data); match; match = regex.exec(node.data)) {
      const id = ids[match[1]];
      if (!firstUse.has(id)) firstUse.set(id, { form: match[1], linked: linkedTo === `/glossary#${id}` });
    }
  }
  const unlinked = linksGlossary ? [...firstUse].filter(([, use]) => !use.linked).map(([id, use]) => `${use.form} (${id})`) : [];
  // The text and links of the section under h2#ID (defined here: the function runs in the page).
  const section = (id) => {
    const heading = doc.querySelector(`h2#${id}`);
    if (!heading) return null;
    let text = '';
    const links = [];
    for (let e = heading.nextElementSibling; e && e.tagName !== 'H2'; e = e.nextElementSibling) {
      text += ` ${e.textContent}`;
      links.push(...[...e.querySelectorAll('a[href]')].map((a) => a.getAttribute('href')));
    }
    return { text, links };
  };
  return {
    height: document.documentElement.scrollHeight,
    goals: !!goals,
    goalsFirst: !!goals && (!firstH2 || !!(goals.compareDocumentPosition(firstH2) & Node.DOCUMENT_POSITION_FOLLOWING)),
    summary: !!doc.querySelector('h2#summary'),
    selfCheck: !!selfCheck,
    questions,
    longExcerpts: excerpts.filter((e) => e.lines > maxLines).map((e) => `${e.region} (${e.lines} lines)`),
    hookExcerpts: excerpts.filter((e) => e.hook).map((e) => e.region),
    excerpts: excerpts.length,
    termsUsed: firstUse.size,
    unlinked,
    cloneCommand: doc.querySelector('.clone-command')?.textContent ?? '',
    download: doc.querySelector('.download-source a.download-source-link')?.getAttribute('href') ?? null,
    courseMap: [...doc.querySelectorAll('.course-map a.course-map-link')].map((a) => a.getAttribute('href')),
    // The core path (chapters.mjs: core, needs): the sidebar's marks, the course map's marks, its
    // core exercises and each entry's needs; the previous/next links carry no mark.
    sidebarCore: [...document.querySelectorAll('.VPSidebar a')].filter((a) => a.querySelector('.core-mark')?.textContent.trim() === 'core').map((a) => a.getAttribute('href')),
    footerCoreMarks: document.querySelectorAll('.VPDocFooter .core-mark').length,
    courseMapCore: [...doc.querySelectorAll('.course-map li')].filter((li) => li.querySelector(':scope > .core-mark')).map((li) => li.querySelector('a.course-map-link')?.getAttribute('href')),
    courseMapCoreExercises: [...doc.querySelectorAll('.course-map a.course-map-core-exercise')].map((a) => a.getAttribute('href')),
    courseMapNeeds: Object.fromEntries([...doc.querySelectorAll('.course-map li')].map((li) => [li.querySelector('a.course-map-link')?.getAttribute('href'), [...li.querySelectorAll('a.course-map-need')].map((a) => a.getAttribute('href'))])),
    troubleshooting: section('troubleshooting'),
    codeText: [...doc.querySelectorAll('pre code')].map((c) => c.textContent).join('\n'),
  };
}

export function courseInfoArguments(link) {
  return { ...glossaryArguments(), linksGlossary: linksGlossaryOn(link.replace(/^\//, '') + '.md'), maxLines: MAX_EXCERPT_LINES };
}

// The verdicts, from what courseInfoInPage found on each page (visited: key -> info, info.course).
export function checkCourse(visited, pass, fail, keyOf) {
  const home = visited.get('/')?.course;
  if (!home) fail('home page: not measured');
  else {
    const problems = [];
    // The clone command (a placeholder address only when the build had no download either), the
    // download, or both; checkSourceDownload holds the download to the built site's tarball.
    const clone = /git clone \S+ rdmalab/.test(home.cloneCommand);
    if (!clone && !home.download) problems.push('neither the clone command nor the source download');
    if (!home.goals) problems.push('no goals');
    const expected = CHAPTERS.filter((c) => c.link !== '/' && (c.group !== 'Exercises' || c.link === '/exercises')).map((c) => c.link);
    if (home.courseMap.join(' ') !== expected.join(' ')) problems.push(`chapter list ${home.courseMap.join(' ')} is not the sidebar's ${expected.join(' ')}`);
    const ways = [clone && 'the clone command', home.download && 'the source download'].filter(Boolean).join(' and ');
    if (problems.length) fail(`home page: ${problems.join('; ')}`);
    else pass(`home page: ${ways}, the goals, and all ${expected.length} chapters in the sidebar's order`);
  }

  checkCorePath(visited, pass, fail, keyOf);
  checkTroubleshooting(visited, pass, fail, keyOf);

  const chapters = courseChapters();
  const shape = [];
  const tall = [];
  for (const chapter of chapters) {
    const info = visited.get(keyOf(chapter.link))?.course;
    if (!info) { shape.push(`${chapter.link}: not measured`); continue; }
    const missing = [];
    if (!info.goals) missing.push('goals');
    else if (!info.goalsFirst) missing.push('goals before the first section');
    if (!info.summary) missing.push('a summary (#summary)');
    if (!info.selfCheck) missing.push('a self-check (#self-check)');
    else if (info.questions < 3 || info.questions > 5) missing.push(`3–5 self-check questions (has ${info.questions})`);
    if (missing.length) shape.push(`${chapter.link}: no ${missing.join(', ')}`);
    if (info.height > MAX_SCREENS * SCREEN_PX) tall.push(`${chapter.link} ${(info.height / SCREEN_PX).toFixed(1)} screens`);
  }
  if (shape.length) fail(`chapters: ${shape.length} of ${chapters.length} lack their frame: ${shape.slice(0, 6).join('; ')}`);
  else pass(`chapters: all ${chapters.length} open with goals and close with a summary and 3–5 self-check questions`);
  if (tall.length) fail(`chapters: ${tall.length} taller than ${MAX_SCREENS} screens at 1280 px: ${tall.join('; ')}`);
  else pass(`chapters: none of ${chapters.length} taller than ${MAX_SCREENS} screens (${MAX_SCREENS * SCREEN_PX} px) at 1280 px`);

  const long = [];
  const hooks = [];
  const unlinked = [];
  let excerpts = 0;
  let terms = 0;
  let pages = 0;
  for (const [key, info] of visited) {
    if (!info.course || key.startsWith('/source')) continue;
    pages += 1;
    excerpts += info.course.excerpts;
    terms += info.course.termsUsed;
    long.push(...info.course.longExcerpts.map((e) => `${key}: ${e}`));
    hooks.push(...info.course.hookExcerpts.map((e) => `${key}: ${e}`));
    // The reference tables are rendered by components from data, not written as prose: the
    // build's linking (a Markdown rule) never sees their text.
    if (info.course.unlinked.length && !GENERATED_TABLES.has(key)) unlinked.push(`${key}: ${info.course.unlinked.join(', ')}`);
  }
  if (!excerpts) fail('excerpts: none found');
  else if (long.length) fail(`excerpts: ${long.length} of ${excerpts} longer than ${MAX_EXCERPT_LINES} lines: ${long.slice(0, 6).join('; ')}`);
  else pass(`excerpts: all ${excerpts} on ${pages} pages are ${MAX_EXCERPT_LINES} lines or shorter`);
  if (hooks.length) fail(`excerpts: ${hooks.length} show a trace hook: ${hooks.slice(0, 6).join('; ')}`);
  else if (excerpts) pass(`excerpts: none of ${excerpts} shows a trace hook`);
  if (!terms) fail('glossary: no term found on any page');
  else if (unlinked.length) fail(`glossary: terms not linked at their first use: ${unlinked.slice(0, 6).join('; ')}`);
  else pass(`glossary: every term is linked at its first use (${terms} first uses on ${pages} pages)`);

  const hello = visited.get('/hello-rdma')?.course;
  const build = 'g++ -std=c++20 -O2 -Wall -o hello-rdma lessons/hello-rdma/hello-rdma.cpp -lrdmacm -libverbs';
  if (!hello) fail('hello-rdma: page not measured');
  else if (!hello.codeText.includes(build)) fail('hello-rdma: the page does not show its build line');
  else if (!/server: found "Hello from the client, placed by RDMA WRITE" \(43 bytes\)/.test(hello.codeText)) fail('hello-rdma: the page does not show the server\'s output');
  else pass('hello-rdma: the page shows its one-line build and both sides\' output');
}

// The core path (chapters.mjs: core): every core chapter and exercise, and nothing else, carries
// the "core" mark in the sidebar (read on Getting started; the previous/next links show plain
// titles); the home page's course map marks the same chapters, lists the core exercises with the
// exercises' entry, and shows each deep dive's needs, in chapters.mjs's order.
export function checkCorePath(visited, pass, fail, keyOf) {
  const core = CHAPTERS.filter((c) => c.core);
  if (!core.length) { fail('core path: no chapter in chapters.mjs is core'); return; }
  const keys = (list) => list.map((link) => keyOf(link ?? '?')).join(' ');
  const page = visited.get(keyOf('/getting-started'))?.course;
  if (!page) fail('core path: /getting-started not measured (the sidebar is read there)');
  else {
    const problems = [];
    if (keys(page.sidebarCore) !== keys(core.map((c) => c.link))) {
      problems.push(`the sidebar marks ${keys(page.sidebarCore) || 'nothing'}, not ${keys(core.map((c) => c.link))}`);
    }
    if (page.footerCoreMarks) problems.push('the previous/next links show the mark');
    if (problems.length) fail(`core path: ${problems.join('; ')}`);
    else pass(`core path: the sidebar marks all ${core.length} core chapters and exercises, and only those`);
  }
  const home = visited.get('/')?.course;
  if (!home) { fail('core path: home page not measured'); return; }
  const problems = [];
  const listed = core.filter((c) => c.group !== 'Exercises' || c.link === '/exercises').map((c) => c.link);
  const exercises = core.filter((c) => c.group === 'Exercises' && c.link !== '/exercises').map((c) => c.link);
  if (keys(home.courseMapCore) !== keys(listed)) problems.push(`the course map marks ${keys(home.courseMapCore) || 'nothing'}, not ${keys(listed)}`);
  if (keys(home.courseMapCoreExercises) !== keys(exercises)) problems.push(`its core exercises are ${keys(home.courseMapCoreExercises) || 'none'}, not ${keys(exercises)}`);
  const needs = CHAPTERS.filter((c) => c.needs);
  for (const chapter of needs) {
    const shown = home.courseMapNeeds[chapter.link] ?? [];
    if (keys(shown) !== keys(chapter.needs)) problems.push(`${chapter.link} shows needs ${keys(shown) || 'none'}, not ${keys(chapter.needs)}`);
  }
  if (problems.length) fail(`core path: home page: ${problems.slice(0, 4).join('; ')}`);
  else pass(`core path: the course map marks ${listed.length} core entries, lists ${exercises.length} core exercises, and shows the needs of ${needs.length} deep dives`);
}

// Getting started says what to do when the first run fails: what each accelerator line of the
// lab means, the commands that show what failed, and where rdma-doctor and the lab's failure
// lines are explained.
export function checkTroubleshooting(visited, pass, fail, keyOf) {
  const section = visited.get(keyOf('/getting-started'))?.course?.troubleshooting;
  if (!section) { fail('getting started: no "If the first run fails" section (h2#troubleshooting)'); return; }
  const text = section.text.replace(/\s+/g, ' ');
  const phrases = [
    'KVM: /dev/kvm is usable', 'TCG emulation: no usable /dev/kvm', 'KVM could not run the guest here before',
    'RDMALAB_LAB_ACCEL=kvm', 'asked for', './rdmalab lab --verbose -- true', './rdmalab deps',
    '--output-on-failure', 'build/test-logs', 'rdma-doctor',
  ];
  const missing = phrases.filter((phrase) => !text.includes(phrase));
  const links = section.links.map((href) => href.replace(/\.html(?=#|$)/, ''));
  missing.push(...['/when-it-fails', '/lab#when-the-lab-fails', '/errors'].filter((link) => !links.includes(link)).map((link) => `a link to ${link}`));
  if (missing.length) fail(`getting started: the troubleshooting section lacks ${missing.join(', ')}`);
  else pass('getting started: the troubleshooting section explains the accelerator lines and links the tools');
}

// Runs in the page at a phone's width: every box wider than the screen is marked as one that
// scrolls, and diagrams, ladders and tables carry a visible line saying so.
export function scrollCuesInPage() {
  const problems = [];
  let wide = 0;
  const boxes = document.querySelectorAll('.vp-doc .site-diagram-scroll, .vp-doc .tv-frame, .vp-doc table, .vp-doc div[class*="language-"] pre');
  for (const box of boxes) {
    if (box.scrollWidth <= box.clientWidth + 1) continue;
    wide += 1;
    const name = box.closest('.site-diagram')?.dataset.diagram ?? box.tagName.toLowerCase();
    if (!box.classList.contains('scrolls-x')) problems.push(`${name}: scrolls with no cue`);
    else if (!box.matches('pre')) {
      const cue = box.previousElementSibling;
      const shown = cue?.classList.contains('scroll-cue') && cue.getBoundingClientRect().height > 0;
      if (!shown) problems.push(`${name}: no visible "scroll" line`);
    }
  }
  return { wide, problems, boxes: boxes.length };
}

// The source download (docs/build.sh packs HEAD into the built site's download/): at 1280 and
// 390 px the home page and Getting started show its link on the screen, named after the
// tarball, with the tarball's SHA-256, and the link answers HTTP 200 with the tarball's bytes.
// Skipped only for a site built outside a git checkout, which has no download.
export async function checkSourceDownload(page, baseUrl, distDir, { pass, fail, skip, visitPage }) {
  const dir = path.join(distDir, 'download');
  const files = existsSync(dir) ? readdirSync(dir).filter((name) => /^rdmalab-[0-9a-f]+\.tar\.gz$/.test(name)) : [];
  if (!files.length && !isGitCheckout(path.resolve(distDir, '../../..'))) {
    skip('source download: the site was built outside a git checkout, so it has none');
    return;
  }
  if (files.length !== 1) {
    fail(`source download: the built site's download/ holds ${files.length} tarballs, not 1 (docs/build.sh puts one there)`);
    return;
  }
  const [file] = files;
  const bytes = statSync(path.join(dir, file)).size;
  const sha256 = readFileSync(path.join(dir, `${file}.sha256`), 'utf8').split(' ')[0];
  const problems = [];
  let checked = 0;
  try {
    for (const [width, height] of [[1280, 800], [390, 844]]) {
      await page.setViewportSize({ width, height });
      for (const link of ['/', '/getting-started']) {
        const where = `${link} at ${width} px`;
        await visitPage(page, `${baseUrl}${link}`);
        const shown = await page.evaluate(() => {
          const a = document.querySelector('.vp-doc .download-source a.download-source-link');
          if (!a) return null;
          a.scrollIntoView({ block: 'center' });
          const box = a.getBoundingClientRect();
          const sha = document.querySelector('.vp-doc .download-source .download-source-sha256');
          return {
            href: a.getAttribute('href'), text: a.textContent.trim(), left: box.left, right: box.right, height: box.height,
            sha256: sha?.textContent.trim(), shaRight: sha?.getBoundingClientRect().right ?? 0, pageWidth: document.documentElement.scrollWidth,
          };
        });
        if (!shown) { problems.push(`${where}: no download link`); continue; }
        checked += 1;
        if (shown.text !== file || shown.href !== `/download/${file}`) problems.push(`${where}: the link "${shown.text}" goes to ${shown.href}, not /download/${file}`);
        if (!shown.height || shown.left < 0 || shown.right > width) problems.push(`${where}: the link is not on the screen (${Math.round(shown.left)}–${Math.round(shown.right)} px)`);
        if (shown.sha256 !== sha256) problems.push(`${where}: shows SHA-256 ${shown.sha256}, the tarball's is ${sha256}`);
        if (shown.shaRight > width || shown.pageWidth > width) problems.push(`${where}: the SHA-256 or the page runs off the screen`);
        const response = await fetch(new URL(shown.href, baseUrl), { signal: AbortSignal.timeout(10_000) });
        const length = (await response.arrayBuffer()).byteLength;
        if (response.status !== 200 || length !== bytes) problems.push(`${where}: the link answers HTTP ${response.status} with ${length} bytes, not 200 with ${bytes}`);
      }
    }
  } catch (error) {
    problems.push(error.message.split('\n')[0]);
  } finally {
    await page.setViewportSize({ width: 1280, height: 800 });
  }
  if (problems.length) fail(`source download: ${problems.slice(0, 4).join('; ')}`);
  else pass(`source download: ${file} (${bytes} bytes) linked on / and /getting-started at 1280 and 390 px (${checked} views), its SHA-256 shown, HTTP 200`);
}

function isGitCheckout(repository) {
  try {
    const top = execFileSync('git', ['-C', repository, 'rev-parse', '--show-toplevel'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return realpathSync(top) === realpathSync(repository);
  } catch {
    return false;
  }
}
