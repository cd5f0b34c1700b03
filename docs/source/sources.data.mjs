// The list of complete-program pages for /source/ (a VitePress data loader).
import { leadingComment, sourceFiles } from '../.vitepress/sources.mjs';

// At most `limit` characters, cut at a word, with an ellipsis when cut.
function shorten(text, limit) {
  if (text.length <= limit) return text;
  return `${text.slice(0, text.lastIndexOf(' ', limit))} …`;
}

export default {
  watchFiles: ['../../lessons/*/*.cpp'],
  load() {
    return sourceFiles().map((source) => ({
      slug: source.slug,
      file: source.file,
      lesson: source.lesson,
      lines: source.lines,
      regions: source.regions.length,
      summary: shorten(leadingComment(source.text), 220),
    }));
  },
};
