// Build-time data for the reference chapter: the device and port limits each
// lesson reads (see .vitepress/limits.mjs).
import { LIMIT_FIELDS, lessonLimits } from './.vitepress/limits.mjs';

export default {
  watchFiles: ['../lessons/*/*.cpp', '../common/src/*.cpp', '../common/include/rdmalab/*.hpp'],
  load() {
    return { fields: LIMIT_FIELDS, lessons: lessonLimits() };
  },
};
