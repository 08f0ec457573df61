import { relative } from "node:path";
import { BaseSequencer, type TestSpecification } from "vitest/node";

/**
 * Where the slowest files are, slowest first: the simulated month, then the folders of real
 * processes and real time (e2e) and of the other simulations. A path or a folder.
 */
const SLOW = ["test/simulations/scenarios.test.ts", "test/e2e/", "test/simulations/"];

/**
 * The order files start in, so that the run does not end waiting on one slow file that started
 * last. Vitest starts the longest first by the durations it recorded in the last run; without
 * them (a fresh clone, or after `npm ci` emptied node_modules/.vite) it goes by file size, which
 * starts the month and the end-to-end files behind dozens of quick unit files. So, until there
 * are durations, the files in SLOW go first, in its order (each part still by size).
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
    const rank = (file: TestSpecification) => {
      const at = SLOW.findIndex((slow) => path(file).startsWith(slow));
      return at === -1 ? SLOW.length : at;
    };
    // Array.prototype.sort is stable: within a rank, vitest's order (by size) stays.
    return sorted.sort((a, b) => rank(a) - rank(b));
  }
}
