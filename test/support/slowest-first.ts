import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The folders whose files run longest: real processes and real time (e2e), the month (simulations). */
const SLOW_FOLDERS = ["test/e2e/", "test/simulations/"];

/**
 * The order files start in, so that the run does not end waiting on one slow file that started
 * last. Vitest starts the longest first by the durations it recorded in the last run; without
 * them (a fresh clone, or after `npm ci` emptied node_modules/.vite) it goes by file size, which
 * starts the end-to-end files and the simulations behind dozens of quick unit files. So, until
 * there are durations, those folders go first (each part still by size).
 */
export default class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const root = this.ctx.config.root;
    const path = (file: TestSpecification) => relative(root, file.moduleId).split("\\").join("/");
    const timed = sorted.some((file) =>
      this.ctx.cache.getFileTestResults(`${file.project.name}:${path(file)}`),
    );
    if (timed) return sorted;
    const slow = (file: TestSpecification) => SLOW_FOLDERS.some((folder) => path(file).startsWith(folder));
    return [...sorted.filter(slow), ...sorted.filter((file) => !slow(file))];
  }
}
