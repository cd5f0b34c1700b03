// A browser check of the exercises' hints (issue 42 item 4), for docs/tests/browser.mjs to call:
// on an exercise page, at a phone's width and a laptop's, the hints are three blocks of their
// own ("Hint 1: the idea", "Hint 2: the calls", "Hint 3: the code"), all closed when the page
// opens, each holding one hint (the code only in the third); opening the first leaves the other
// two closed, their text not shown, and the opened block fits the screen.
//   import { checkHintsOneAtATime } from './browser-hints.mjs';
//   await checkHintsOneAtATime(page, baseUrl, { pass, fail, visitPage, waitForCondition });
// pass(text) and fail(text) report one line each; visitPage(page, url) and
// waitForCondition(page, description, predicate, argument) are browser.mjs's. Leaves the viewport
// at 1280x800.

export const HINT_PAGE = '/exercises/01-write';
export const HINT_WIDTHS = [390, 1280];

// Runs in the page: the hint blocks of the "Hints" section, as found.
export function hintBlocksInPage() {
  const heading = document.querySelector('.vp-doc h2#hints');
  if (!heading) return null;
  const blocks = [];
  for (let e = heading.nextElementSibling; e && e.tagName !== 'H2'; e = e.nextElementSibling) {
    if (!e.matches('details')) continue;
    const summary = e.querySelector(':scope > summary');
    const lists = [...e.querySelectorAll('ol')].filter((ol) => !ol.parentElement.closest('ol'));
    const box = e.getBoundingClientRect();
    blocks.push({
      summary: (summary?.textContent ?? '').replace(/\s+/g, ' ').trim(),
      open: e.open,
      // What the block holds: its top-level numbered items and where each list starts.
      items: lists.reduce((n, ol) => n + ol.querySelectorAll(':scope > li').length, 0),
      starts: lists.map((ol) => Number(ol.getAttribute('start') ?? 1)),
      code: e.querySelectorAll('pre code').length,
      // Whether its hint is drawn on screen (a closed block draws its summary only; Chromium
      // hides the rest by content-visibility, which checkVisibility sees and a box may not).
      shown: lists.some((ol) => (ol.checkVisibility ? ol.checkVisibility() : ol.getClientRects().length > 0)),
      left: box.left,
      right: box.right,
    });
  }
  return { blocks, viewport: window.innerWidth };
}

// The problems with the blocks as found (an empty list when all is well). opened: the index of
// the one block that should be open, or -1.
export function hintProblems(found, opened = -1) {
  if (!found) return ['no "Hints" section (h2#hints)'];
  const { blocks, viewport } = found;
  const problems = [];
  if (blocks.length !== 3) return [`${blocks.length} hint blocks, not 3: ${blocks.map((b) => `"${b.summary}"`).join(', ')}`];
  const names = ['the idea', 'the calls', 'the code'];
  blocks.forEach((block, i) => {
    const n = i + 1;
    if (!block.summary.startsWith(`Hint ${n}: ${names[i]}`)) problems.push(`block ${n} is "${block.summary}"`);
    if (block.items !== 1 || block.starts.join() !== String(n)) problems.push(`block ${n} holds items [${block.starts.join()}] (${block.items}), not hint ${n} alone`);
    if ((block.code > 0) !== (n === 3)) problems.push(`block ${n} has ${block.code} code block(s)`);
    const open = i === opened;
    if (block.open !== open) problems.push(`block ${n} is ${block.open ? 'open' : 'closed'}`);
    if (block.shown !== open) problems.push(`block ${n}'s hint is ${block.shown ? 'shown' : 'not shown'}`);
    if (open && (block.left < -1 || block.right > viewport + 1)) problems.push(`block ${n} spans ${Math.round(block.left)}..${Math.round(block.right)} px of ${viewport}`);
  });
  return problems;
}

export async function checkHintsOneAtATime(page, baseUrl, { pass, fail, visitPage, waitForCondition }) {
  for (const width of HINT_WIDTHS) {
    const where = `hints on ${HINT_PAGE} at ${width} px`;
    try {
      await page.setViewportSize({ width, height: width > 800 ? 800 : 844 });
      await visitPage(page, `${baseUrl}${HINT_PAGE}`);
      const closed = hintProblems(await page.evaluate(hintBlocksInPage));
      if (closed.length) throw new Error(`as the page opens: ${closed.join('; ')}`);
      const first = page.locator('.vp-doc h2#hints ~ details').first();
      await first.locator('summary').first().click();
      await waitForCondition(page, 'hint 1 to open', () => document.querySelector('.vp-doc h2#hints ~ details')?.open === true);
      const afterClick = hintProblems(await page.evaluate(hintBlocksInPage), 0);
      if (afterClick.length) throw new Error(`after opening hint 1: ${afterClick.join('; ')}`);
      pass(`${where}: three blocks (the idea, the calls, the code), all closed at first; opening hint 1 shows it alone`);
    } catch (error) {
      fail(`${where}: ${error.message.split('\n')[0]}`);
    }
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}
