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

/** A field of /proc/<pid>/status in MiB (e.g. VmRSS, VmHWM); NaN when unavailable. */
export function statusMiB(pid: number, field: string): number {
  try {
    const line = Deno.readTextFileSync(`/proc/${pid}/status`).split("\n").find((l) =>
      l.startsWith(`${field}:`)
    );
    return line ? Number(line.split(/\s+/)[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}
