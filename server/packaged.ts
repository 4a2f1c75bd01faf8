// Whether this process runs from the packaged tarball (packaging/package.mjs defines
// __CORTEX_PACKAGED__ when it bundles the server) or from a clone (compiled dist/, or the
// sources under test). The one place that asks; the hints, --help and the console follow it.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

declare const __CORTEX_PACKAGED__: string | undefined;

/** The install folder of a packaged server (the bundle is its lib/cortex-server.mjs), else undefined. */
export const PACKAGED_HOME: string | undefined = typeof __CORTEX_PACKAGED__ === 'string' ? join(dirname(fileURLToPath(import.meta.url)), '..') : undefined;
