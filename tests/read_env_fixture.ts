/**
 * For tests/config_test.ts: prints, as JSON (unset as null), what `readEnv` sees of PORT, SECRET and LOG_TOKENS, before and after
 * `clearLibraryVariables`, under whatever `--allow-env` it was started with.
 */
import { clearLibraryVariables, readEnv } from "../lib/config/mod.ts";

const before = readEnv(["PORT", "SECRET", "LOG_TOKENS"]);
clearLibraryVariables();
console.log(JSON.stringify({ before, after: readEnv(["LOG_TOKENS"]) }, (_, v) => v === undefined ? null : v));
