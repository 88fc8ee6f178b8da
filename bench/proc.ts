/** Process readings from /proc for the benchmarks (Linux; NaN elsewhere). */

/** User + system CPU seconds of a process. */
export function cpuSeconds(pid: number): number {
  try {
    const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1].split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}
