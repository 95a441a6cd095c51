/**
 * Loaded before every test file of a run (bunfig.toml `[test] preload`): hooks registered here are the
 * run's own. At the end of the run the turns tests' shared sandbox pools close (sandbox-pools.ts), so no
 * interpreter outlives the run and Bun does not wait on their pipes, and the run's PostgreSQL cluster,
 * if a test started one (postgres.ts), stops.
 */
import { afterAll } from "bun:test";
import { stopPostgres } from "./postgres.ts";
import { closeSharedPools } from "./sandbox-pools.ts";

afterAll(closeSharedPools);
afterAll(stopPostgres);
