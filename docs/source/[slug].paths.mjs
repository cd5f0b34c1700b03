// One complete-program page per lesson (and per other file a chapter imports
// from), generated at build time from the files themselves: /source/<slug>.
import { leadingComment, repositoryLink, sourceFiles, sourcePageMarkdown } from '../.vitepress/sources.mjs';

export default {
  watch: ['../../lessons/*/*.cpp', '../../common/src/*.cpp', '../../gpu/src/*.cpp', '../../bench/src/*.cpp', '../*.md'],
  paths() {
    return sourceFiles().map((source) => ({
      params: {
        slug: source.slug,
        title: source.lesson ? `${source.slug}: the complete program` : source.file,
        file: source.file,
        lesson: source.lesson,
        lines: source.lines,
        regionCount: source.regions.length,
        summary: leadingComment(source.text),
        repository: repositoryLink(source.file),
      },
      content: sourcePageMarkdown(source),
    }));
  },
};
