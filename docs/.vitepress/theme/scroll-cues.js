// Shows that a box scrolls sideways: a diagram, a trace ladder, a table or a code block wider
// than the screen gets the class "scrolls-x" (a shadow on its right edge, style.css) and, for
// diagrams, ladders and tables, a visible line above it saying so. Re-checked whenever the page's
// content or the window's width changes. The browser tests hold every wide box at 390 px to it.
const BOXES = '.vp-doc .site-diagram-scroll, .vp-doc .tv-frame, .vp-doc table, .vp-doc div[class*="language-"] pre';
const LABELLED = /site-diagram-scroll|tv-frame|TABLE/;

function mark() {
  // Not before Vue has hydrated the page: hydration matches the server's HTML to components by
  // position, so a cue line inserted earlier would be taken for the component's own element
  // (a diagram's SVG ended up inside the cue line, and the page scrolled sideways).
  if (!document.querySelector('#app')?.__vue_app__) {
    soon();
    return;
  }
  for (const box of document.querySelectorAll(BOXES)) {
    const wide = box.scrollWidth > box.clientWidth + 1;
    box.classList.toggle('scrolls-x', wide);
    const labelled = LABELLED.test(box.className) || LABELLED.test(box.tagName);
    const cue = box.previousElementSibling?.classList.contains('scroll-cue') ? box.previousElementSibling : null;
    if (wide && labelled && !cue) {
      const line = document.createElement('div');
      line.className = 'scroll-cue';
      line.setAttribute('aria-hidden', 'true');
      line.textContent = 'wider than the screen: scroll it sideways →';
      box.before(line);
    } else if (!wide && cue) {
      cue.remove();
    }
  }
}

let pending = 0;
function soon() {
  if (pending) return;
  pending = window.setTimeout(() => {
    pending = 0;
    mark();
  }, 150);
}

export function installScrollCues() {
  if (typeof window === 'undefined') return;
  window.addEventListener('resize', soon);
  const observer = new MutationObserver((changes) => {
    // Our own cue lines are changes too: ignore those, or every mark would schedule another.
    if (changes.every((c) => [...c.addedNodes, ...c.removedNodes].every((n) => n.classList?.contains('scroll-cue')))) return;
    soon();
  });
  observer.observe(document.body, { childList: true, subtree: true });
  soon();
}
