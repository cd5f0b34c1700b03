// One reference page per verbs or rdma_cm call the lessons use: /verbs/<name>, generated at build
// time from .vitepress/verbs.mjs (what the call takes, returns and fails with) and from the
// lessons themselves (which ones call it), so a page cannot name a lesson that no longer does.
import { VERBS } from '../.vitepress/verbs.mjs';
import { verbPageMarkdown } from '../.vitepress/verb-pages.mjs';

export default {
  watch: ['../../lessons/*/*.cpp', '../.vitepress/verbs.mjs'],
  paths() {
    return VERBS.map((verb) => ({ params: { verb: verb.name, title: verb.name }, content: verbPageMarkdown(verb) }));
  },
};
