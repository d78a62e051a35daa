// Loaded before every test file (`node --import`): the ucode build cache goes to the system's
// temporary directory, so tests never write into the source tree. One shared directory: the
// cache is keyed by content, so test files reuse each other's builds.
import { tmpdir } from 'node:os';
import { join } from 'node:path';

process.env.LUNA_CACHE_DIR ??= join(tmpdir(), 'luna-ts-test-cache');
// A test that clears LUNA_CACHE_DIR for a child (to check a default) must still not write into
// the user's ~/.cache: the precompiled ucenv.h falls back to $XDG_CACHE_HOME/luna-ts/pch.
process.env.XDG_CACHE_HOME = join(tmpdir(), 'luna-ts-test-xdg-cache');

// The tests start `node bin/luna …` (and the runner starts each test file) without bin/luna's
// first line, which drops NODE_EXTRA_CA_CERTS: with it set (Debian sets it to its 144
// certificates), every Node process parses the bundle at start-up, ~0.1 s of CPU that nothing
// here uses (no test opens a TLS connection). Dropped here, in the runner's process too, so
// every process the suite starts inherits its absence, as `luna` itself runs
// (test/cli/launcher.test.ts sets it on purpose to check that bin/luna drops it).
delete process.env.NODE_EXTRA_CA_CERTS;
