/**
 * Deadlines for waits in tests: a hang fails the test with a message instead of stalling the run. A
 * deadline is a guard against hanging, set far above the time the work needs; speed is measured in the slow
 * tier (tests/slow/) and in bench/, never here.
 */

/** Default deadline of a wait (ms). */
export const DEADLINE_MS = 10_000;

/** Resolves like `promise`, or rejects with "timed out after <ms> ms waiting for <what>" after `ms`. */
export async function withDeadline<T>(promise: Promise<T>, what: string, ms = DEADLINE_MS): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The exit status of `child`, or a failure after `ms`: the child is killed (SIGKILL) before it throws. */
export async function statusWithin(
  child: Deno.ChildProcess,
  what: string,
  ms = DEADLINE_MS,
): Promise<Deno.CommandStatus> {
  try {
    return await withDeadline(child.status, what, ms);
  } catch (error) {
    try {
      child.kill("SIGKILL");
    } catch {
      // already gone
    }
    await child.status;
    throw error;
  }
}
