// Links each glossary term (glossary.mjs) at its first use on every page, and writes the glossary
// page itself. One matcher serves the build (a markdown-it rule) and the browser tests (which
// check, on the rendered pages, that every term's first use in the prose is the linked one), so
// the two cannot disagree about what a "use" is.
//
// What counts as a use: one of the term's `forms`, case-sensitive, as a whole word (not inside a
// longer word, a dotted or dashed name), in the text of a paragraph, list item, table cell or
// callout — not in headings, code, links, a collapsed question's title, or diagrams.
import { GLOSSARY } from './glossary.mjs';

const WORD = '[A-Za-z0-9_]';

// [{ form, id }] longest form first, so "RDMA WRITE" wins over a shorter term inside it.
export function glossaryForms(glossary = GLOSSARY) {
  return glossary
    .flatMap((entry) => entry.forms.map((form) => ({ form, id: entry.id })))
    .sort((a, b) => b.form.length - a.form.length);
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// The source of one regular expression matching any form as a whole word; group 1 is the form.
// A whole word has no letter, digit or '_' on either side, and is not joined to one by '.', '/'
// or '-': "rkey" does not match in "rkeys", "wc.rkey" or "rkey-based", but does before a full stop.
export function glossaryPatternSource(glossary = GLOSSARY) {
  const alternatives = glossaryForms(glossary).map(({ form }) => escapeRegExp(form)).join('|');
  return `(?<!${WORD}|${WORD}[-./])(${alternatives})(?!${WORD}|[-./]${WORD})`;
}

// Pages that get no links: the glossary itself and the generated complete-program pages.
export function linksGlossaryOn(relativePath = '') {
  return relativePath !== 'glossary.md' && !relativePath.startsWith('source/');
}

// The markdown-it plugin: after inline parsing, splits the first text token that uses each term
// into text, a link to /glossary#id, text.
export function glossaryLinks(md, glossary = GLOSSARY) {
  const idOf = new Map(glossaryForms(glossary).map(({ form, id }) => [form, id]));
  const source = glossaryPatternSource(glossary);
  md.core.ruler.push('rdmalab_glossary_links', (state) => {
    // renderInline (a collapsed question's title, for one) is not the page's prose.
    if (state.inlineMode || !linksGlossaryOn(state.env?.relativePath)) return;
    const linked = new Set();
    let inHeading = false;
    for (const block of state.tokens) {
      if (block.type === 'heading_open') inHeading = true;
      if (block.type === 'heading_close') inHeading = false;
      if (block.type !== 'inline' || inHeading || !block.children) continue;
      // A term may be broken across source lines ("completion\nqueues"): a soft break is a space
      // (the rendered page shows one), and neighbouring text becomes one piece to search.
      const merged = [];
      for (const token of block.children) {
        const piece = token.type === 'softbreak' ? Object.assign(new state.Token('text', '', 0), { content: ' ' }) : token;
        const last = merged[merged.length - 1];
        if (piece.type === 'text' && last?.type === 'text') {
          const joined = new state.Token('text', '', 0);
          joined.content = last.content + piece.content;
          merged[merged.length - 1] = joined;
        } else {
          merged.push(piece);
        }
      }
      const children = [];
      let linkDepth = 0;
      for (const token of merged) {
        if (token.type === 'link_open') linkDepth += 1;
        if (token.type === 'link_close') linkDepth -= 1;
        if (token.type !== 'text' || linkDepth > 0) {
          children.push(token);
          continue;
        }
        let rest = token.content;
        const pattern = new RegExp(source, 'g');
        let match;
        let consumed = 0;
        while ((match = pattern.exec(rest)) !== null) {
          const id = idOf.get(match[1]);
          if (linked.has(id)) continue;
          linked.add(id);
          if (match.index > consumed) {
            const before = new state.Token('text', '', 0);
            before.content = rest.slice(consumed, match.index);
            children.push(before);
          }
          const open = new state.Token('link_open', 'a', 1);
          open.attrSet('href', `/glossary#${id}`);
          open.attrSet('class', 'glossary-term');
          const text = new state.Token('text', '', 0);
          text.content = match[1];
          const close = new state.Token('link_close', 'a', -1);
          children.push(open, text, close);
          consumed = match.index + match[1].length;
        }
        if (consumed === 0) {
          children.push(token);
        } else if (consumed < rest.length) {
          const after = new state.Token('text', '', 0);
          after.content = rest.slice(consumed);
          children.push(after);
        }
      }
      block.children = children;
    }
  });
}

function escapeMarkdown(text) {
  return text.replace(/([\\`*_[\]<>|])/g, '\\$1');
}

// The glossary page's entries as Markdown: a letter heading per initial, a heading per term
// (its id the anchor every link uses), its expansion, definition and where it is explained.
export function glossaryMarkdown(glossary = GLOSSARY) {
  const sorted = [...glossary].sort((a, b) => a.term.localeCompare(b.term, 'en', { sensitivity: 'base' }));
  const lines = [];
  let letter = '';
  for (const entry of sorted) {
    const initial = entry.term[0].toUpperCase();
    if (initial !== letter) {
      letter = initial;
      lines.push(`## ${/[A-Z]/.test(letter) ? letter : 'Other'} {#letter-${letter.toLowerCase()}}`, '');
    }
    lines.push(`### ${escapeMarkdown(entry.term)} {#${entry.id}}`, '');
    const expansion = entry.expansion ? `*${escapeMarkdown(entry.expansion)}.* ` : '';
    const see = (entry.see ?? []).map((s) => `[${escapeMarkdown(s.text)}](${s.link})`).join(', ');
    lines.push(`${expansion}${escapeMarkdown(entry.definition)}${see ? ` See ${see}.` : ''}`, '');
  }
  return lines.join('\n');
}

// The markdown-it plugin for the glossary page: its "<!-- glossary-entries -->" line becomes the
// entries, before the page is parsed (so they are searchable and their headings get anchors).
export function glossaryPage(md, glossary = GLOSSARY) {
  md.core.ruler.before('block', 'rdmalab_glossary_page', (state) => {
    if (state.env?.relativePath !== 'glossary.md') return;
    state.src = state.src.replace('<!-- glossary-entries -->', glossaryMarkdown(glossary));
  });
}
