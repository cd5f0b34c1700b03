// The rows of the verbs index (docs/verbs/index.md), at build time.
import { verbIndex } from '../.vitepress/verb-pages.mjs';
import { VERB_SOURCE_WATCH } from '../.vitepress/verb-callers.mjs';

export default {
  watch: VERB_SOURCE_WATCH,
  load() {
    return verbIndex();
  },
};
