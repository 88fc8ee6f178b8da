/**
 * `deno task compile` (and `compile:cli`, `compile:mac`): runs `deno compile` with the given arguments and,
 * when it fails because it could not get its `denort` runtime (offline, or a bad `DENORT_BIN`), says what is
 * missing and where a denort binary comes from, after Deno's own error.
 *
 * Usage: deno run --allow-run --allow-env=DENORT_BIN --allow-read scripts/compile.ts <deno compile args…>
 * @module
 */

/** What to tell the user after a failed `deno compile` whose error output is `stderr`; null when not ours. */
export function denortAdvice(
  stderr: string,
  denortBin: string | undefined,
  version: string = Deno.version.deno,
  target: string = Deno.build.target,
): string | null {
  const asset = `denort-${target}.zip`;
  const where =
    `A denort binary is the ${asset} asset of the Deno v${version} release (unzip it once and keep ` +
    `it); it must be the same version as the deno that compiles.`;
  const given = denortBin !== undefined && denortBin !== "";
  // Deno reports both problems while "Setting up base binary", naming denort; a DENORT_BIN that is no
  // executable (the zip itself, say) fails later, while "Writing binary bytes".
  const notExecutable = given && /Writing binary bytes|Not an ELF|Mach-O|\bPE\b/i.test(stderr);
  if (!notExecutable && !/denort|base binary/i.test(stderr)) return null;
  if (notExecutable && /\.zip$/i.test(denortBin!)) {
    const inside = denortBin!.replace(/[^/\\]*$/, "denort");
    return `deno compile could not use DENORT_BIN=${denortBin} (the error above): it names the zip archive; ` +
      `unzip it and point DENORT_BIN at the denort file inside (e.g. DENORT_BIN=${inside} deno task compile). ` +
      where;
  }
  if (given) {
    return `deno compile could not use DENORT_BIN=${denortBin} (the error above): it must name a denort ` +
      `binary of Deno ${version} for ${target}. ${where}`;
  }
  return `deno compile could not get its runtime, denort (the error above): it downloads denort for Deno ` +
    `${version} from Deno's release server, which needs the network. Offline, point DENORT_BIN at a denort ` +
    `binary and run again, e.g. DENORT_BIN=/path/to/denort deno task compile. ${where}`;
}

if (import.meta.main) {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["compile", ...Deno.args],
    stdin: "inherit",
    stdout: "inherit",
    stderr: "piped",
  }).spawn();
  // Deno's error output is passed through as it comes, and kept to read what went wrong.
  let stderr = "";
  const decoder = new TextDecoder();
  for await (const chunk of child.stderr) {
    Deno.stderr.writeSync(chunk);
    stderr += decoder.decode(chunk, { stream: true });
  }
  const status = await child.status;
  if (!status.success) {
    const advice = denortAdvice(stderr, Deno.env.get("DENORT_BIN"));
    if (advice !== null) Deno.stderr.writeSync(new TextEncoder().encode(`\n${advice}\n`));
  }
  Deno.exit(status.code);
}
