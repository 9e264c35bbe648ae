// A pool thread inside ONNX Runtime's native code must not be stopped. Its binding runs a session
// synchronously; a thread terminated during that call (a task's timeout, the process exiting)
// throws a C++ exception on the way out that nothing catches, and the whole process aborts
// (exit 134, "terminate called after throwing an instance of 'Napi::Error'"). Loading the binding
// is native code too: a thread stopped while its module initialiser runs throws out of
// napi_register_module_v1 the same way, so the binding is loaded inside the gate as well
// (workers/use-lite.ts).
//
// So the pool shares a gate with its threads, two Int32 cells in a SharedArrayBuffer: CLOSING,
// which the pool sets before its threads may be stopped, and BUSY, the threads inside native code.
// A thread counts itself in before it looks at CLOSING, and the pool sets CLOSING before it waits
// for BUSY to reach 0; with sequentially consistent Atomics either the pool sees the thread busy
// and waits, or the thread sees CLOSING and does not enter.
import { workerData } from 'node:worker_threads';

export const GATE_CLOSING = 0;
export const GATE_BUSY = 1;
export const GATE_CELLS = 2;

const shared = (workerData as { nativeGate?: unknown } | null | undefined)?.nativeGate;
const gate = shared instanceof SharedArrayBuffer ? new Int32Array(shared) : undefined;

/** Runs `call` (native work) inside the gate: refused once the pool is closing, waited for otherwise. */
export async function insideNative<T>(call: () => Promise<T>): Promise<T> {
  if (!gate) return call();
  Atomics.add(gate, GATE_BUSY, 1);
  try {
    if (Atomics.load(gate, GATE_CLOSING) !== 0) throw new Error('the worker pool is closing');
    return await call();
  } finally {
    Atomics.sub(gate, GATE_BUSY, 1);
    Atomics.notify(gate, GATE_BUSY);
  }
}
