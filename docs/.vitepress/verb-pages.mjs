// The per-call reference pages (docs/verbs/): their Markdown, from one entry of verbs.mjs and
// from the sources that call it. Plain ES module, Node only (the build and the unit tests).
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { REPOSITORY_ROOT, sourceFiles, sourceSlug } from './sources.mjs';
import { VERBS } from './verbs.mjs';

function cell(text) {
  return String(text).replace(/\\/g, '\\\\').replace(/\|/g, '\\|').replace(/</g, '&lt;').replace(/\n/g, ' ');
}
function prose(text) {
  return String(text).replace(/</g, '&lt;');
}

// Every lesson (and common library file) that calls `name`, with how many times:
// [{ lesson, file, calls }], lesson null for a common library file.
let lessonTexts;
export function lessonsCalling(name) {
  lessonTexts ??= readdirSync(path.join(REPOSITORY_ROOT, 'lessons'), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => {
      const file = `lessons/${entry.name}/${entry.name}.cpp`;
      try {
        return { lesson: entry.name, file, text: readFileSync(path.join(REPOSITORY_ROOT, file), 'utf8') };
      } catch {
        return null;
      }
    })
    .filter(Boolean)
    .concat(readdirSync(path.join(REPOSITORY_ROOT, 'common', 'src'))
      .filter((file) => file.endsWith('.cpp'))
      .map((file) => ({ lesson: null, file: `common/src/${file}`, text: readFileSync(path.join(REPOSITORY_ROOT, 'common', 'src', file), 'utf8') })));
  const call = new RegExp(`(?<![A-Za-z0-9_])${name}\\s*\\(`, 'g');
  return lessonTexts
    .map(({ lesson, file, text }) => ({ lesson, file, calls: (text.match(call) ?? []).length }))
    .filter((entry) => entry.calls > 0);
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
  const common = callers.filter((c) => !c.lesson);
  const item = (c) => {
    const label = c.lesson ?? c.file;
    const name = pages.has(sourceSlug(c.file)) ? `[\`${label}\`](/source/${sourceSlug(c.file)})` : `\`${label}\``;
    return `- ${name} (${c.calls} call${c.calls > 1 ? 's' : ''})`;
  };
  if (lessons.length) lines.push(`Called by ${lessons.length} lesson${lessons.length > 1 ? 's' : ''}:`, '', ...lessons.map(item), '');
  if (common.length) lines.push('Called in the common library, for the lessons that use it:', '', ...common.map(item), '');
  if (!callers.length) lines.push('No lesson here calls it.', '');
  lines.push('');
  return lines.join('\n');
}

// The index page's rows: name, library, summary's first sentence, lessons calling it.
export function verbIndex() {
  return VERBS.map((verb) => ({
    name: verb.name,
    library: verb.library,
    summary: verb.summary.split(/(?<=\.)\s/)[0],
    lessons: lessonsCalling(verb.name).filter((c) => c.lesson).length,
  }));
}
