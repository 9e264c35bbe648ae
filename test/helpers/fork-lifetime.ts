// Keeps each test file's fork alive until Vitest stops it.
//
// Vitest 4.1 stops a fork in two steps: it asks the fork to tear down, then kills it and waits for
// its 'exit' event, unless `exitCode` is already set. Between the steps the fork's event loop may
// empty, so the fork ends by itself. If it ends by a signal (an abort in a native module's exit
// code), `exitCode` stays null and the event has already fired. Vitest then waits forever, and the
// run never prints its summary (seen once in CI: every file passed, then nothing for 70 minutes).
// This handle keeps the loop busy until Vitest's own SIGTERM, whose 'exit' it always hears. If the
// IPC channel closes first (Vitest gone), the fork lets go.
// A fork runs many files (isolate: false) and this setup file runs before each: one handle a fork.
const HELD = Symbol.for('lattice.test.fork-kept-alive');
const forkState = globalThis as { [HELD]?: true };
if (!forkState[HELD]) {
  forkState[HELD] = true;
  const keepAlive = setInterval(() => undefined, 1 << 30);
  process.once('disconnect', () => clearInterval(keepAlive));
}
