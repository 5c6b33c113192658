import type { D1Migration } from "cloudflare:test";
import type { Bindings } from "../src/platform/env";
import type * as mainModule from "../src/index";

declare global {
  namespace Cloudflare {
    // Merges with the generated Env (worker-configuration.d.ts): the vars only config() knows, and the suite's own bindings.
    interface Env extends Omit<Bindings, keyof SalvoEnv> {
      TEST_MIGRATIONS: D1Migration[];
      TEST_DIRECTORY_MIGRATIONS: D1Migration[];
      MIGRATION_DB: D1Database;
    }
    interface GlobalProps {
      mainModule: typeof mainModule;
    }
  }
}
