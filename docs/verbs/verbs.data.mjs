// The rows of the verbs index (docs/verbs/index.md), at build time.
import { verbIndex } from '../.vitepress/verb-pages.mjs';

export default {
  watch: [
    '../../lessons/*/*.cpp',
    '../../lessons/*/*.hpp',
    '../../lessons/*/CMakeLists.txt',
    '../../common/src/*.cpp',
    '../../common/include/rdmalab/*.hpp',
    '../../gpu/src/*.cpp',
    '../../gpu/src/*.hpp',
    '../../gpu/include/rdmalab/gpu/*.hpp',
    '../.vitepress/verbs.mjs',
  ],
  load() {
    return verbIndex();
  },
};
