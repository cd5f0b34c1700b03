// The per-call reference pages (docs/verbs/): their Markdown, from one entry of verbs.mjs and
// from the sources that call it. Plain ES module, Node only (the build and the unit tests).
import { sourceFiles, sourceSlug } from './sources.mjs';
import { callersOf, LIBRARIES, repositorySources } from './verb-callers.mjs';
import { VERBS } from './verbs.mjs';

function cell(text) {
  return String(text).replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/\n/g, ' ');
}
function prose(text) {
  return String(text).replace(/</g, '&lt;');
}

// Every lesson that calls `name`, directly or through the project's libraries, and every library
// file that calls it directly (verb-callers.mjs): [{ lesson, file, calls, through }], lesson null
// for a library file.
let repository;
export function lessonsCalling(name) {
  repository ??= repositorySources();
  return callersOf(name, repository);
}

// A declaration longer than the code column (90 characters) gets one parameter per line.
export function wrapSignature(signature) {
  if (signature.length <= 90) return signature;
  const open = signature.indexOf('(');
  const close = signature.lastIndexOf(')');
  if (open < 0 || close < open) return signature;
  const parameters = signature.slice(open + 1, close).split(/,\s*/);
  return `${signature.slice(0, open + 1)}\n${parameters.map((p) => `    ${p}`).join(',\n')}${signature.slice(close)}`;
}

export function verbPageMarkdown(verb) {
  const lines = [];
  lines.push(`\`#include <${verb.header}>\` · ${verb.library} · [all calls](/verbs/)`, '');
  lines.push('```c', wrapSignature(verb.signature), '```', '');
  lines.push(prose(verb.summary), '');
  if (verb.parameters?.length) {
    lines.push('## Parameters {#parameters}', '', '| parameter | what it is |', '|---|---|');
    for (const p of verb.parameters) lines.push(`| \`${cell(p.name)}\` | ${cell(p.text)} |`);
    lines.push('');
  }
  lines.push('## Returns {#returns}', '', prose(verb.returns), '');
  if (verb.errors?.length) {
    lines.push('## Errors {#errors}', '', '| errno | when |', '|---|---|');
    for (const e of verb.errors) lines.push(`| \`${cell(e.errno)}\` | ${cell(e.text)} |`);
    lines.push('');
  }
  if (verb.notes?.length) {
    lines.push('## In practice {#notes}', '');
    for (const note of verb.notes) lines.push(`- ${prose(note)}`);
    lines.push('');
  }
  lines.push('## Where the course shows it {#lessons}', '');
  if (verb.chapter) lines.push(`Explained in [${verb.chapter.text}](${verb.chapter.link}).`, '');
  const pages = new Set(sourceFiles().map((s) => s.slug));
  const callers = lessonsCalling(verb.name);
  const lessons = callers.filter((c) => c.lesson);
  const libraries = callers.filter((c) => !c.lesson);
  const link = (label, file) => (pages.has(sourceSlug(file)) ? `[\`${label}\`](/source/${sourceSlug(file)})` : `\`${label}\``);
  const count = (n) => `${n} call${n > 1 ? 's' : ''}`;
  // Through: the library functions the lesson calls that reach the verb, three at most per file.
  const through = (c) => {
    const byFile = new Map();
    for (const t of c.through) byFile.set(t.file, [...(byFile.get(t.file) ?? []), t.function]);
    return [...byFile]
      .map(([file, names]) => `\`${file}\`: ${names.slice(0, 3).map((n) => `\`${n}\``).join(', ')}${names.length > 3 ? ', …' : ''}`)
      .join('; ');
  };
  const lessonItem = (c) => `- ${link(c.lesson, c.file)} (${c.calls > 0 ? count(c.calls) : `through ${through(c)}`})`;
  const libraryItem = (c) => `- ${link(c.file, c.file)} (${LIBRARIES[c.library].name}, ${count(c.calls)})`;
  if (lessons.length) {
    lines.push(`Called by ${lessons.length} lesson${lessons.length > 1 ? 's' : ''}:`, '');
    if (lessons.some((c) => c.calls === 0)) {
      lines.push(
        'A lesson listed *through* a library function does not call it itself: that function of the project\'s libraries does, or one it calls, on at least one path.',
        '',
      );
    }
    lines.push(...lessons.map(lessonItem), '');
  }
  if (libraries.length) lines.push('Called in the project\'s libraries:', '', ...libraries.map(libraryItem), '');
  if (!lessons.length) lines.push('No lesson here calls it.', '');
  lines.push('');
  return lines.join('\n');
}

// The index page's rows: name, library, summary's first sentence, lessons calling it.
export function verbIndex() {
  return VERBS.map((verb) => ({
    name: verb.name,
    library: verb.library,
    summary: verb.summary.split(/(?<=\.)\s/)[0],
    lessons: lessonsCalling(verb.name).filter((c) => c.lesson).length, // directly or through a library
  }));
}
