// Unit tests of which lessons the per-call reference pages say call a verb
// (docs/.vitepress/verb-callers.mjs, docs/.vitepress/verb-pages.mjs): calls through the project's
// libraries count, comments and strings do not, and every lesson a page names has the evidence
// in its sources.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { VERBS } from '../.vitepress/verbs.mjs';
import { lessonsCalling, verbIndex, verbPageMarkdown } from '../.vitepress/verb-pages.mjs';
import { callersOf, linkedLibraries, repositorySources, stripCode } from '../.vitepress/verb-callers.mjs';

const pageOf = (name) => verbPageMarkdown(VERBS.find((verb) => verb.name === name));

test('ibv_reg_dmabuf_mr and ibv_get_device_list list the lessons that call them through a library', () => {
  const dmabuf = lessonsCalling('ibv_reg_dmabuf_mr').filter((c) => c.lesson);
  assert.ok(
    dmabuf.some((c) => c.lesson === 'gpu-write' && c.through.some((t) => t.file === 'gpu/src/registration.cpp')),
    'gpu-write registers through gpu/src/registration.cpp (register_memory)',
  );
  const devices = lessonsCalling('ibv_get_device_list').filter((c) => c.lesson);
  assert.ok(
    devices.some((c) => c.lesson === 'devices' && c.through.some((t) => t.file.startsWith('common/'))),
    'devices lists the devices through common/ (get_devices)',
  );
  for (const name of ['ibv_reg_dmabuf_mr', 'ibv_get_device_list']) {
    const markdown = pageOf(name);
    assert.doesNotMatch(markdown, /No lesson here calls it/, name);
    assert.match(markdown, /\(through `(?:common|gpu)\//, name);
    assert.ok(verbIndex().find((row) => row.name === name).lessons >= 1, `${name}: the index counts its lessons`);
  }
});

// The lessons a page lists under "Called by N lessons:": [{ lesson, detail }], detail being
// "2 calls" or "through `file`: `function`, …".
function listedLessons(markdown) {
  const section = markdown.split(/^Called by \d+ lessons?:$/m)[1] ?? '';
  const list = section.split(/^Called in the project's libraries:$/m)[0];
  return [...list.matchAll(/^- \[?`([\w-]+)`(?:\]\([^)]*\))? \((.*)\)$/gm)].map((m) => ({ lesson: m[1], detail: m[2] }));
}

test('every lesson a page names calls its verb, itself or through a library function it calls', () => {
  const sources = repositorySources();
  const lessons = new Map(sources.lessons.map((l) => [l.lesson, { ...l, code: l.texts.map(stripCode).join('\n') }]));
  const libraryCode = new Map(sources.libraries.map((f) => [f.file, stripCode(f.text)]));
  const names = (code, id) => new RegExp(`(?<!\\w)${id}(?!\\w)`).test(code);
  const lastName = (label) => label.split('::').at(-1);
  for (const verb of VERBS) {
    const callers = new Map(lessonsCalling(verb.name).filter((c) => c.lesson).map((c) => [c.lesson, c]));
    const listed = listedLessons(verbPageMarkdown(verb));
    assert.deepEqual(listed.map((l) => l.lesson), [...callers.keys()], `${verb.name}: the page lists exactly its callers`);
    for (const { lesson, detail } of listed) {
      const where = `${verb.name}, lesson ${lesson}`;
      const source = lessons.get(lesson);
      assert.ok(source, `${where}: no such lesson`);
      if (/^\d+ calls?$/.test(detail)) {
        assert.ok(names(source.code, verb.name), `${where}: its code (comments and strings aside) never names ${verb.name}`);
        continue;
      }
      assert.match(detail, /^through `/, where);
      const { through } = callers.get(lesson);
      assert.ok(through.length > 0, `${where}: listed through nothing`);
      for (const t of through) {
        assert.ok(detail.includes(`\`${t.file}\``), `${where}: the page does not name ${t.file}`);
        assert.ok(source.libraries.includes(t.library), `${where}: does not link the ${t.library} library (${t.file})`);
        for (const id of t.function.split('::')) assert.ok(names(source.code, id), `${where}: never names ${id} (${t.file})`);
        assert.deepEqual(t.chain[0], { file: t.file, function: t.function }, where);
        t.chain.forEach((step, k) => {
          assert.ok(libraryCode.has(step.file), `${where}: ${step.file} is no library file`);
          const next = t.chain[k + 1];
          const callee = next ? lastName(next.function) : verb.name;
          assert.ok(names(libraryCode.get(step.file), callee), `${where}: ${step.file} (${step.function}) never names ${callee}`);
        });
      }
    }
  }
});

test('a lesson that links none of the project\'s libraries is never listed through one', () => {
  const hello = repositorySources().lessons.find((l) => l.lesson === 'hello-rdma');
  assert.deepEqual(hello.libraries, []);
  for (const verb of VERBS) {
    for (const c of lessonsCalling(verb.name)) if (c.lesson === 'hello-rdma') assert.deepEqual(c.through, [], verb.name);
  }
});

test('comments, strings and preprocessor lines are blanked, positions kept', () => {
  const text = 'a("x(", \'(\'); // y(\n/* z(\n */ b(1\'000); R"(w()"\n#define C(x) d(x)\ne()';
  const code = stripCode(text);
  assert.equal(code.length, text.length);
  assert.equal(code.split('\n').length, text.split('\n').length);
  for (const gone of ['x(', 'y(', 'z(', 'w(', 'C(', 'd(']) assert.ok(!code.includes(gone), gone);
  for (const kept of ['a(', 'b(1\'000)', 'e()']) assert.ok(code.includes(kept), kept);
});

test('the libraries a lesson links follow its CMakeLists.txt', () => {
  assert.deepEqual(linkedLibraries(null), ['common']);
  assert.deepEqual(linkedLibraries('target_link_libraries(x PRIVATE rdmalab_gpu)'), ['gpu', 'common']);
  assert.deepEqual(linkedLibraries('target_link_libraries(x PRIVATE rdmalab_common rdmalab_bench)'), ['common']);
  assert.deepEqual(linkedLibraries('# none of the rdmalab_common library\ntarget_link_libraries(x PRIVATE PkgConfig::IBVERBS)'), []);
});

const LIBRARY = `namespace rdmalab {
namespace {
void helper() { ibv_foo(nullptr); }
}  // namespace

void open_foo() { helper(); }

void Foo::run() {
    helper();
}

Bar::Bar(int size) : size_{size}, name_("Bar{") {
    ibv_bar(size_);
}

using Owned = std::unique_ptr<int, Releaser<ibv_free, kFree>>;
}  // namespace rdmalab
`;
const GPU_LIBRARY = 'namespace rdmalab::gpu {\nvoid register_foo() { open_foo(); }\n}  // namespace rdmalab::gpu\n';
const lesson = (name, text, libraries = ['common']) => ({ lesson: name, file: `lessons/${name}/${name}.cpp`, texts: [text], libraries });
const SOURCES = {
  lessons: [
    lesson('direct', 'int main() { ibv_foo(nullptr); ibv_foo(nullptr); }'),
    lesson('comment', '// ibv_foo(x) is not called here\nint main() { puts("ibv_foo(x)"); /* ibv_foo( */ }'),
    lesson('through', 'int main() { open_foo(); }'),
    lesson('unlinked', 'int main() { open_foo(); }', []),
    lesson('own', 'static void open_foo() {}\nint main() { open_foo(); }'),
    lesson('method', 'int main() { Foo foo; foo.run(); }'),
    lesson('hidden', 'int main() { helper(); }'),
    lesson('gpu', 'int main() { gpu::register_foo(); }', ['gpu', 'common']),
    lesson('gpu-unlinked', 'int main() { gpu::register_foo(); }'),
    lesson('constructor', 'int main() { Bar bar(4); }'),
    lesson('alias', 'int main() { Owned owned; }'),
  ],
  libraries: [
    { file: 'common/src/foo.cpp', library: 'common', text: LIBRARY },
    { file: 'gpu/src/reg.cpp', library: 'gpu', text: GPU_LIBRARY },
  ],
};
const summary = (verb) =>
  callersOf(verb, SOURCES).map((c) => ({ who: c.lesson ?? c.file, calls: c.calls, through: c.through.map((t) => t.chain.map((s) => s.function).join(' > ')) }));

test('a lesson calls a verb itself, or through library functions it calls and links', () => {
  assert.deepEqual(summary('ibv_foo'), [
    { who: 'direct', calls: 2, through: [] },
    { who: 'through', calls: 0, through: ['open_foo > helper'] },
    { who: 'method', calls: 0, through: ['Foo::run > helper'] },
    { who: 'gpu', calls: 0, through: ['register_foo > open_foo > helper'] },
    { who: 'common/src/foo.cpp', calls: 1, through: [] },
  ]);
  assert.deepEqual(summary('ibv_bar'), [
    { who: 'constructor', calls: 0, through: ['Bar'] },
    { who: 'common/src/foo.cpp', calls: 1, through: [] },
  ]);
  assert.deepEqual(summary('ibv_free'), [
    { who: 'alias', calls: 0, through: ['Owned'] },
    { who: 'common/src/foo.cpp', calls: 1, through: [] },
  ]);
});
