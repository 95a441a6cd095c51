/**
 * Loaded before every test file of a run (bunfig.toml `[test] preload`): hooks registered here are the
 * run's own. At the end of the run the turns tests' shared sandbox pools close (sandbox-pools.ts), so no
 * interpreter outlives the run and Bun does not wait on their pipes.
 */
import { afterAll } from "bun:test";
import { closeSharedPools } from "./sandbox-pools.ts";

afterAll(closeSharedPools);
