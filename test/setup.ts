// Loaded before every test file (`node --import`): the ucode build cache goes to the system's
// temporary directory, so tests never write into the source tree. One shared directory: the
// cache is keyed by content, so test files reuse each other's builds.
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.LUNA_CACHE_DIR ??= join(tmpdir(), 'luna-ts-test-cache');
