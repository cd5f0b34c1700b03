// The rows of the verbs index (docs/verbs/index.md), at build time.
import { verbIndex } from '../.vitepress/verb-pages.mjs';

export default {
  watch: ['../../lessons/*/*.cpp', '../.vitepress/verbs.mjs'],
  load() {
    return verbIndex();
  },
};
