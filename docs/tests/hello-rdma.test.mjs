// Hello, RDMA's two pages against the program they teach (lessons/hello-rdma/hello-rdma.cpp):
// every function the reader needs is shown in an excerpt, and every line of run_server and
// run_client; the exchange's diagram (diagrams/hello-rdma-exchange.svg) names on each side the
// program's calls, events and completions, all of them and in the order the program makes them,
// and the buffer it draws is the one in the page's recorded output.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { chapterImports, parseRegions } from '../.vitepress/sources.mjs';

const DOCS_DIR = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const FILE = 'lessons/hello-rdma/hello-rdma.cpp';
const PAGES = ['/hello-rdma', '/hello-rdma-write'];
const program = readFileSync(path.join(DOCS_DIR, '..', FILE), 'utf8');
const lines = program.split('\n');
const svg = readFileSync(path.join(DOCS_DIR, 'diagrams', 'hello-rdma-exchange.svg'), 'utf8');
// Argument parsing, which the pages leave to the whole program's page.
const NOT_SHOWN = new Set(['main', 'usage', 'is_number_in']);

// The functions defined at the file's top level: { name, first, last } (0-based line indexes).
function functions() {
  const found = [];
  lines.forEach((line, index) => {
    if (/^(\s|\/\/|#|}|namespace|using|struct|template|constexpr)/.test(line) || !line.includes('(')) return;
    const name = /(\w+)\(/.exec(line)?.[1];
    const last = lines.findIndex((l, i) => i > index && l === '}');
    if (name && last > 0) found.push({ name, first: index, last });
  });
  return found;
}

// The body of run_server or run_client, as text.
function body(name) {
  const fn = functions().find((f) => f.name === name);
  return lines.slice(fn.first + 1, fn.last).join('\n');
}

// The diagram's boxes on one side (by their left edge), top to bottom: the calls, events and
// completions named in their text, in reading order, as they are spelled in the program.
function namedInDiagram(side) {
  const names = [];
  const texts = [];
  for (const group of svg.matchAll(/<g class="box[^"]*"><rect x="(\d+)"[^>]*\/>(.*?)<\/g>/g)) {
    const x = Number(group[1]);
    if (side === 'client' ? x >= 300 : x < 590) continue;
    for (const text of group[2].matchAll(/<text [^>]*y="([\d.]+)"[^>]*>([^<]*)<\/text>/g)) {
      texts.push({ y: Number(text[1]), text: text[2].replace(/&quot;/g, '"').replace(/&amp;/g, '&') });
    }
  }
  for (const { text } of texts.sort((a, b) => a.y - b.y)) {
    for (const match of text.matchAll(/\b([a-z_][a-z0-9_]*)\(|\bevent ([A-Z_]+)|\b(IBV_WC_[A-Z_]+)\b/g)) {
      names.push(match[1] ? `${match[1]}(` : match[2] ? `RDMA_CM_EVENT_${match[2]}` : match[3]);
    }
  }
  return names;
}

test('every function the reader needs is in an excerpt on the two pages, and all of run_server and run_client', () => {
  const imported = new Set(chapterImports().filter((entry) => entry.file === FILE && PAGES.includes(entry.chapter.link)).map((entry) => entry.region));
  const shown = new Set();
  for (const region of parseRegions(program, FILE)) {
    if (!imported.has(region.name)) continue;
    for (let line = region.start; line < region.end - 1; line += 1) shown.add(line);  // 0-based, markers out
  }
  const missing = [];
  const all = functions();
  assert.ok(all.length >= 12, `${all.length} functions found in ${FILE}`);
  for (const fn of all) {
    if (NOT_SHOWN.has(fn.name)) continue;
    const whole = fn.name.startsWith('run_');  // shown piece by piece, the signature aside
    for (let line = whole ? fn.first + 1 : fn.first; line <= (whole ? fn.last - 1 : fn.last); line += 1) {
      const text = lines[line].trim();
      if (whole && (!text || text.startsWith('//') || text === 'return 0;' || text === '}')) continue;
      if (!shown.has(line)) missing.push(`${fn.name}: line ${line + 1} "${text.slice(0, 50)}"`);
    }
  }
  assert.deepEqual(missing, [], `lines of ${FILE} that no excerpt on ${PAGES.join(' or ')} shows`);
});

for (const [side, run] of [['client', 'run_client'], ['server', 'run_server']]) {
  test(`the diagram's ${side} side names ${run}'s calls, events and completions, all of them, in its order`, () => {
    const source = body(run);
    const drawn = namedInDiagram(side);
    assert.ok(drawn.length >= 10, `${drawn.length} names on the ${side} side`);
    let at = 0;
    drawn.forEach((name, i) => {
      const found = source.indexOf(name, at);
      assert.ok(found >= 0, `the diagram's ${side} side has ${name} after ${drawn[i - 1] ?? 'nothing'}, but ${run} does not make it there`);
      at = found + 1;
    });
    const made = [...new Set([...source.matchAll(/\b((?:rdma|ibv)_\w+\(|create_queues\(|RDMA_CM_EVENT_\w+|IBV_WC_\w+)/g)].map((m) => m[1]))];
    assert.deepEqual(made.filter((name) => !drawn.includes(name)), [], `${run} makes these, the diagram's ${side} side does not show them`);
  });
}

test("the diagram's buffer (address, rkey, length) is the one in the page's recorded output", () => {
  const drawn = /(?:"|&quot;)([0-9a-f]+ [0-9a-f]+ \d+)(?:"|&quot;)/.exec(svg)?.[1];
  assert.ok(drawn, 'the diagram shows the private data as "ADDRESS RKEY LENGTH"');
  const page = readFileSync(path.join(DOCS_DIR, 'hello-rdma.md'), 'utf8');
  assert.ok(page.includes(`server: connected; told the client my buffer: ${drawn} (address rkey length)`), `hello-rdma.md's recorded run does not show ${drawn}`);
});
