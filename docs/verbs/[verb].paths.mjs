// One reference page per verbs or rdma_cm call the lessons use: /verbs/<name>, generated at build
// time from .vitepress/verbs.mjs (what the call takes, returns and fails with) and from the
// lessons and the project's libraries (which lessons call it, directly or through a library
// function: .vitepress/verb-callers.mjs), so a page cannot name a lesson that no longer does.
import { VERBS } from '../.vitepress/verbs.mjs';
import { verbPageMarkdown } from '../.vitepress/verb-pages.mjs';
import { VERB_SOURCE_WATCH } from '../.vitepress/verb-callers.mjs';

export default {
  watch: VERB_SOURCE_WATCH,
  paths() {
    return VERBS.map((verb) => ({ params: { verb: verb.name, title: verb.name }, content: verbPageMarkdown(verb) }));
  },
};
