// Unit tests that read appConfig from a map name their own data dir: the suite's guard
// (SHARDLINE_FORBIDDEN_DATA_DIR, set by the integration projects' global setup and inherited by
// every fork) refuses the default ./.data, and reading config touches no file.
export const unitDataDir: Record<string, string> = { SHARDLINE_DATA_DIR: "/nonexistent/shardline-unit-config" }
