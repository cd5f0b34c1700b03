// The list of complete-program pages for /source/ (a VitePress data loader).
import { leadingComment, sourceFiles } from '../.vitepress/sources.mjs';

export default {
  watchFiles: ['../../lessons/*/*.cpp'],
  load() {
    return sourceFiles().map((source) => ({
      slug: source.slug,
      file: source.file,
      lesson: source.lesson,
      lines: source.lines,
      regions: source.regions.length,
      summary: leadingComment(source.text).slice(0, 220),
    }));
  },
};
