// Which lessons call a verbs or rdma_cm function, directly or through the project's libraries,
// for the per-call reference pages (verb-pages.mjs). Plain ES module, Node only.
//
// It reads C++ as text, not as a compiler does, and is simple on purpose:
// - comments, string and character literals and preprocessor lines are blanked first, so a
//   call named in a comment or a message does not count;
// - a direct call is `name(`, or `name` passed in a `using X = ...;` alias (the owner types'
//   `Releaser<ibv_dereg_mr, ...>`, whose deleter calls it);
// - the libraries are common/ (src/*.cpp, include/rdmalab/*.hpp: the common library) and gpu/
//   (src/*.cpp and *.hpp, include/rdmalab/gpu/*.hpp: the GPU library). Their functions are found
//   by matching braces at namespace and class scope, and a library function reaches a verb if
//   its body calls the verb or a library function that reaches it;
// - a lesson (every .cpp and .hpp in lessons/NAME/) uses a library only if it links it: every
//   lesson links the common library unless lessons/NAME/CMakeLists.txt says otherwise
//   (hello-rdma links none), and rdmalab_gpu brings both;
// - a lesson uses a library function when it calls a free function by name (unless the lesson
//   defines one of that name itself), calls a method (`.m(`, `->m(`, `C::m(`) and names its
//   class, or names a class whose constructor, destructor or operator() the library defines,
//   or names an alias.
// What it finds is what the code can call, possibly only on some paths (an error path, a
// device given by name): the page says "through" with the library function the lesson calls.
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { REPOSITORY_ROOT } from './sources.mjs';

// The libraries, as the page names them, and which of them each one's code may call.
// What the verb pages are made from, as VitePress's watch globs from docs/verbs/ (the pages and the
// index both): the lessons, the libraries they link, and the verbs' own descriptions.
export const VERB_SOURCE_WATCH = [
  '../../lessons/*/*.cpp',
  '../../lessons/*/*.hpp',
  '../../lessons/*/CMakeLists.txt',
  '../../common/src/*.cpp',
  '../../common/include/rdmalab/*.hpp',
  '../../gpu/src/*.cpp',
  '../../gpu/src/*.hpp',
  '../../gpu/include/rdmalab/gpu/*.hpp',
  '../.vitepress/verbs.mjs',
];

export const LIBRARIES = {
  common: { name: 'the common library', uses: ['common'] },
  gpu: { name: 'the GPU library', uses: ['gpu', 'common'] },
};
const LIBRARY_DIRECTORIES = {
  common: ['common/src', 'common/include/rdmalab'],
  gpu: ['gpu/src', 'gpu/include/rdmalab/gpu'],
};

// The text with comments, the contents of string and character literals and preprocessor lines
// replaced by spaces (newlines kept, so positions and line numbers stay).
export function stripCode(text) {
  const blank = (s) => s.replace(/[^\n]/g, ' ');
  const n = text.length;
  let out = '';
  let i = 0;
  while (i < n) {
    const c = text[i];
    const before = i > 0 ? text[i - 1] : '';
    const next = i + 1 < n ? text[i + 1] : '';
    const raw = c === 'R' && next === '"' && !/\w/.test(before) ? /^R"([^()\\\s]{0,16})\(/.exec(text.slice(i, i + 20)) : null;
    if (c === '/' && next === '/') {
      let j = text.indexOf('\n', i);
      if (j < 0) j = n;
      out += blank(text.slice(i, j));
      i = j;
    } else if (c === '/' && next === '*') {
      let j = text.indexOf('*/', i + 2);
      j = j < 0 ? n : j + 2;
      out += blank(text.slice(i, j));
      i = j;
    } else if (raw) {
      const end = `)${raw[1]}"`;
      let j = text.indexOf(end, i + raw[0].length);
      j = j < 0 ? n : j + end.length;
      out += blank(text.slice(i, j));
      i = j;
    } else if (c === '"' || (c === "'" && !/\w/.test(before))) {
      // A quote after a letter or digit is a digit separator (1'000), not a literal.
      let j = i + 1;
      while (j < n && text[j] !== c && text[j] !== '\n') j += text[j] === '\\' ? 2 : 1;
      j = Math.min(j, n);
      const closed = j < n && text[j] === c;
      out += c + blank(text.slice(i + 1, j)) + (closed ? c : '');
      i = closed ? j + 1 : j;
    } else {
      out += c;
      i += 1;
    }
  }
  let continued = false;
  return out
    .split('\n')
    .map((line) => {
      const directive = continued || /^\s*#/.test(line);
      continued = directive && /\\\s*$/.test(line);
      return directive ? ' '.repeat(line.length) : line;
    })
    .join('\n');
}

// The class a header `... class|struct|union Name ... {` opens, or null.
function className(header) {
  const last = [...header.matchAll(/\b(?:class|struct|union)\s+(\w+)/g)].at(-1);
  if (!last || /[(){};=]/.test(header.slice(last.index + last[0].length))) return null;
  return last[1];
}

// The functions and aliases of stripped code: [{ kind: 'function' | 'alias', name, cls, local,
// file, body }]. cls is the class of a method (from `C::m` or the class body it is defined in);
// local is true for what only this file can call (an anonymous namespace, a static function).
// A function's body is its constructor initializers, if any, and its braces; an alias's is its
// declaration.
export function definitions(code, file) {
  const found = [];
  const scopes = [];
  let headerStart = 0;
  const inBody = () => scopes.some((s) => s.kind === 'function' || s.kind === 'other' || s.kind === 'init');
  const enclosingClass = () => [...scopes].reverse().find((s) => s.kind === 'class')?.name ?? null;
  const fileLocal = () => scopes.some((s) => s.anonymous);
  for (let i = 0; i < code.length; i += 1) {
    const c = code[i];
    if (c === ';' && !inBody()) {
      const declaration = code.slice(headerStart, i + 1).trim();
      const alias = /^(?:template\s*<[^;]*>\s*)?using\s+(\w+)\s*=/.exec(declaration);
      if (alias) found.push({ kind: 'alias', name: alias[1], cls: enclosingClass(), local: fileLocal(), file, body: declaration });
      headerStart = i + 1;
    } else if (c === '{') {
      if (inBody()) {
        scopes.push({ kind: 'inner' });
        continue;
      }
      const header = code.slice(headerStart, i).trim();
      const paren = header.indexOf('(');
      const assigned = paren >= 0 && header.slice(0, paren).includes('=');
      const init = paren >= 0 ? /\)\s*(?:const\s*)?(?:noexcept\s*)?:(?!:)/.exec(header) : null;
      if (/(?:^|\s)namespace(?:\s+[\w:]+)?$/.test(header) || header === 'extern') {
        scopes.push({ kind: 'namespace', anonymous: /namespace$/.test(header) });
        headerStart = i + 1;
      } else if (className(header)) {
        scopes.push({ kind: 'class', name: className(header) });
        headerStart = i + 1;
      } else if (init && !assigned && /\w$/.test(header)) {
        scopes.push({ kind: 'init' }); // a brace in a constructor's initializer list: `a_{x}`
      } else if (paren >= 0 && !assigned && !/^enum\b/.test(header)) {
        let before = header.slice(0, paren).trimEnd();
        if (/\boperator$/.test(before)) before += '()';
        const name = /((?:\w+\s*::\s*)*(?:~?\w+|operator\(\)))$/.exec(before);
        if (!name) {
          scopes.push({ kind: 'other' });
          continue;
        }
        const parts = name[1].replace(/\s+/g, '').split('::');
        const qualifier = parts.length > 1 ? parts.at(-2) : null;
        // A qualifier that starts with a capital is a class (the project's style); else a namespace.
        const cls = qualifier && /^[A-Z]/.test(qualifier) ? qualifier : enclosingClass();
        const isStatic = /(?:^|\s)static\s/.test(before);
        const definition = {
          kind: 'function',
          name: parts.at(-1),
          cls,
          local: fileLocal() || (cls === null && isStatic),
          file,
          start: i,
          initializers: init ? header.slice(init.index) : '',
        };
        scopes.push({ kind: 'function', definition });
      } else {
        scopes.push({ kind: 'other' }); // an initializer, an enum, a lambda outside functions
      }
    } else if (c === '}') {
      const scope = scopes.pop();
      if (scope?.kind === 'function') {
        const { start, initializers, ...definition } = scope.definition;
        found.push({ ...definition, body: `${initializers} ${code.slice(start, i + 1)}` });
      }
      if (!scope || (scope.kind !== 'init' && scope.kind !== 'inner')) headerStart = i + 1;
    }
  }
  return found;
}

// What stripped code calls and names: free calls (`f(`, `ns::f(` for a namespace of the
// libraries), member calls (`.m(`, `->m(`, `C::m(`) and every identifier.
function scan(code, namespaces) {
  const free = new Set();
  const member = new Set();
  const ids = new Set();
  const call = /\s*\(/y;
  for (const match of code.matchAll(/[A-Za-z_]\w*/g)) {
    const start = match.index;
    const name = match[0];
    if (start > 0 && /\w/.test(code[start - 1])) continue; // inside a number: 0x1f
    ids.add(name);
    call.lastIndex = start + name.length;
    if (!call.test(code)) continue;
    let k = start - 1;
    while (k >= 0 && /\s/.test(code[k])) k -= 1;
    const previous = k >= 0 ? code[k] : '';
    if (previous === '.' || (previous === '>' && code[k - 1] === '-')) {
      member.add(name);
    } else if (previous === ':' && code[k - 1] === ':') {
      let q = k - 2;
      while (q >= 0 && /\s/.test(code[q])) q -= 1;
      let qualifierStart = q;
      while (qualifierStart >= 0 && /\w/.test(code[qualifierStart])) qualifierStart -= 1;
      const qualifier = code.slice(qualifierStart + 1, q + 1);
      if (namespaces.has(qualifier)) free.add(name);
      else if (qualifier) member.add(name); // `::f(` alone is the global namespace: not ours
    } else if (previous !== '~') {
      free.add(name);
    }
  }
  return { free, member, ids };
}

// A constructor, destructor or operator(): used by naming the class.
function special(definition) {
  const { kind, cls, name } = definition;
  return kind === 'function' && cls !== null && (name === cls || name === `~${cls}` || name === 'operator()');
}

// How a page names a library function: get_devices, Connection::resolve, Connection (for its
// constructor), MemoryRegion (an alias).
export function functionLabel(definition) {
  if (special(definition)) return definition.cls;
  return definition.kind === 'function' && definition.cls ? `${definition.cls}::${definition.name}` : definition.name;
}

// The library definitions that code (scanned) uses. file and cls: where that code is (a library
// function's own file reaches its file-local functions, and a method calls its class's methods
// without `this->`); own: free functions the code defines itself, which hide the libraries'.
function callees(scanned, all, { file = null, cls = null, own = new Set(), libraries }) {
  return all.filter((e) => {
    if (!libraries.includes(e.library)) return false;
    if (e.local && e.file !== file) return false;
    if (e.kind === 'alias') return scanned.ids.has(e.name);
    if (special(e)) return scanned.ids.has(e.cls);
    if (e.cls) return (scanned.member.has(e.name) && scanned.ids.has(e.cls)) || (e.cls === cls && scanned.free.has(e.name));
    return scanned.free.has(e.name) && !own.has(e.name);
  });
}

function escapeRegExp(text) {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// Direct calls of verb in stripped code: `verb(`, and each time an alias declaration passes it.
export function directCalls(code, verb) {
  if (!code.includes(verb)) return 0;
  const name = escapeRegExp(verb);
  let count = code.match(new RegExp(`(?<![\\w.>])${name}\\s*\\(`, 'g'))?.length ?? 0;
  for (const [declaration] of code.matchAll(/\busing\s+\w+\s*=[^;]*;/g)) {
    count += declaration.match(new RegExp(`(?<!\\w)${name}(?!\\w)`, 'g'))?.length ?? 0;
  }
  return count;
}

// The libraries a lesson links, from lessons/NAME/CMakeLists.txt (null: the lesson has none, and
// lessons/CMakeLists.txt links it with rdmalab_common).
export function linkedLibraries(cmakeText) {
  if (cmakeText === null) return ['common'];
  const code = cmakeText.replace(/#.*$/gm, '');
  if (/\brdmalab_gpu\b/.test(code)) return ['gpu', 'common']; // rdmalab_gpu links rdmalab_common
  if (/\b(?:rdmalab_common|rdmalab_bench|efa_rdm_\w+)\b/.test(code)) return ['common'];
  return [];
}

// The lessons and library files of the repository: { lessons: [{ lesson, file, texts,
// libraries }], libraries: [{ file, library, text }] }.
export function repositorySources(root = REPOSITORY_ROOT) {
  const lessonsDir = path.join(root, 'lessons');
  const lessons = readdirSync(lessonsDir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory() && existsSync(path.join(lessonsDir, entry.name, `${entry.name}.cpp`)))
    .map((entry) => entry.name)
    .sort()
    .map((lesson) => {
      const dir = path.join(lessonsDir, lesson);
      const cmake = path.join(dir, 'CMakeLists.txt');
      return {
        lesson,
        file: `lessons/${lesson}/${lesson}.cpp`,
        texts: readdirSync(dir).filter((f) => /\.(?:cpp|hpp)$/.test(f)).sort().map((f) => readFileSync(path.join(dir, f), 'utf8')),
        libraries: linkedLibraries(existsSync(cmake) ? readFileSync(cmake, 'utf8') : null),
      };
    });
  const libraries = [];
  for (const [library, directories] of Object.entries(LIBRARY_DIRECTORIES)) {
    for (const directory of directories) {
      if (!existsSync(path.join(root, directory))) continue;
      for (const f of readdirSync(path.join(root, directory)).filter((name) => /\.(?:cpp|hpp)$/.test(name)).sort()) {
        libraries.push({ file: `${directory}/${f}`, library, text: readFileSync(path.join(root, directory, f), 'utf8') });
      }
    }
  }
  return { lessons, libraries };
}

// The call graph of the libraries and what each lesson uses of them, computed once per sources.
const prepared = new WeakMap();
function prepare(sources) {
  if (prepared.has(sources)) return prepared.get(sources);
  const files = sources.libraries.map((f) => ({ ...f, code: stripCode(f.text) }));
  const namespaces = new Set();
  for (const f of files) {
    for (const [, name] of f.code.matchAll(/\bnamespace\s+([\w:]+)\s*\{/g)) name.split('::').forEach((n) => namespaces.add(n));
  }
  const all = files.flatMap((f) => definitions(f.code, f.file).map((d) => ({ ...d, library: f.library })));
  for (const d of all) d.callees = callees(scan(d.body, namespaces), all, { file: d.file, cls: d.cls, libraries: LIBRARIES[d.library].uses });
  const lessons = sources.lessons.map((lesson) => {
    const codes = lesson.texts.map(stripCode);
    const code = codes.join('\n');
    const own = new Set(codes.flatMap((c) => definitions(c, lesson.file)).filter((d) => d.kind === 'function' && d.cls === null).map((d) => d.name));
    return { ...lesson, code, entries: callees(scan(code, namespaces), all, { own, libraries: lesson.libraries }) };
  });
  const result = { files, all, lessons };
  prepared.set(sources, result);
  return result;
}

// Every lesson that calls verb, and every library file that calls it directly:
// [{ lesson, file, calls, through }] where lesson is null for a library file (then library
// names it), calls counts direct calls, and through lists the library functions the lesson
// calls that reach the verb: [{ file, library, function, chain: [{ file, function }] }], chain
// running from that function to one that calls the verb itself.
export function callersOf(verb, sources) {
  const { files, all, lessons } = prepare(sources);
  const via = new Map();
  for (const d of all) if (directCalls(d.body, verb) > 0) via.set(d, [d]);
  for (let changed = true; changed; ) {
    changed = false;
    for (const d of all) {
      if (via.has(d)) continue;
      const next = d.callees.find((e) => via.has(e));
      if (next) {
        via.set(d, [d, ...via.get(next)]);
        changed = true;
      }
    }
  }
  const callers = [];
  for (const lesson of lessons) {
    const through = [];
    for (const d of lesson.entries) {
      if (!via.has(d) || through.some((t) => t.file === d.file && t.function === functionLabel(d))) continue;
      through.push({
        file: d.file,
        library: d.library,
        function: functionLabel(d),
        chain: via.get(d).map((c) => ({ file: c.file, function: functionLabel(c) })),
      });
    }
    const calls = directCalls(lesson.code, verb);
    if (calls > 0 || through.length > 0) callers.push({ lesson: lesson.lesson, file: lesson.file, calls, through });
  }
  for (const f of files) {
    const calls = directCalls(f.code, verb);
    if (calls > 0) callers.push({ lesson: null, file: f.file, library: f.library, calls, through: [] });
  }
  return callers;
}
