// Whether this process runs from the packaged tarball (packaging/package.mjs defines
// __CORTEX_PACKAGED__ when it bundles the server) or from a clone (compiled dist/, or the
// sources under test). The one place that asks; the hints, --help and the console follow it.
import { realpathSync } from 'node:fs';
import { dirname, isAbsolute, join } from 'node:path';
import { fileURLToPath } from 'node:url';

declare const __CORTEX_PACKAGED__: string | undefined;

/**
 * The install folder of a packaged server (the bundle is its lib/cortex-server.mjs), else
 * undefined. As the launcher was invoked (CORTEX_INVOKED_HOME from bin/cortex-server, e.g.
 * /opt/cortex-server, a link to the versioned folder) when that is this same folder, so the
 * commands printed with it keep working after the next upgrade; else the bundle's own folder.
 */
function packagedHome(): string | undefined {
  if (typeof __CORTEX_PACKAGED__ !== 'string') return undefined;
  const own = join(dirname(fileURLToPath(import.meta.url)), '..');
  const invoked = process.env['CORTEX_INVOKED_HOME'];
  if (invoked !== undefined && isAbsolute(invoked)) {
    try {
      if (realpathSync(invoked) === realpathSync(own)) return invoked;
    } catch {
      // not a folder we can resolve: the bundle's own
    }
  }
  return own;
}

export const PACKAGED_HOME: string | undefined = packagedHome();
