/**
 * Compiles the Unity C# core (bindings/unity/OpenAppleModels.cs) with Mono's mcs, runs its console tests against
 * the real bridge process, and runs the MonoBehaviour adapter (compiled against a UnityEngine stub) the way Unity
 * calls it.
 * Needs `apt-get install -y mono-mcs mono-runtime`.
 */
import assert from "node:assert/strict";
import { assertSucceeded, bridgeEnv, BUILD_DIR, onPath, REPO_ROOT, run } from "./toolchain.ts";

const hasMono = onPath("mcs") && onPath("mono");
const OUT = `${BUILD_DIR}/unity`;
const SRC = `${REPO_ROOT}/bindings/unity`;

Deno.test({
  name: hasMono
    ? "bindings/unity: C# core compiles with mcs and passes its tests against the bridge"
    : "bindings/unity: SKIPPED (mcs/mono missing: apt-get install -y mono-mcs mono-runtime)",
  ignore: !hasMono,
  sanitizeResources: false,
  async fn() {
    await Deno.mkdir(OUT, { recursive: true });
    assertSucceeded(
      await run("mcs", [
        "-warnaserror",
        `-out:${OUT}/OamBridgeTests.exe`,
        `${SRC}/OpenAppleModels.cs`,
        `${SRC}/tests/OamBridgeTests.cs`,
      ]),
      "mcs (tests)",
    );
    assertSucceeded(
      await run("mcs", [
        "-warnaserror",
        `-out:${OUT}/OamBridgeBehaviourTests.exe`,
        `${SRC}/OpenAppleModels.cs`,
        `${SRC}/OamBridgeBehaviour.cs`,
        `${SRC}/tests/UnityEngineStub.cs`,
        `${SRC}/tests/OamBridgeBehaviourTests.cs`,
      ]),
      "mcs (MonoBehaviour adapter)",
    );
    const result = await run("mono", [`${OUT}/OamBridgeTests.exe`], { env: bridgeEnv(), timeoutMs: 120_000 });
    assertSucceeded(result, "mono OamBridgeTests.exe");
    assert.match(result.stdout, / 0 failures/);
    const adapter = await run("mono", [`${OUT}/OamBridgeBehaviourTests.exe`], {
      env: bridgeEnv(),
      timeoutMs: 60_000,
    });
    assertSucceeded(adapter, "mono OamBridgeBehaviourTests.exe");
    assert.match(adapter.stdout, / 0 failures/);
  },
});

/** The C# block of bindings/README.md under "### Outside Unity", as a reader copies it into Game.cs. */
async function consoleExample(): Promise<string> {
  const readme = await Deno.readTextFile(`${REPO_ROOT}/bindings/README.md`);
  const section = readme.split(/^### Outside Unity/m)[1];
  assert.ok(section !== undefined, "bindings/README.md has no '### Outside Unity' section");
  const block = /```csharp\n([\s\S]*?)\n```/.exec(section);
  assert.ok(block, "the 'Outside Unity' section has no csharp block");
  return block[1];
}

Deno.test({
  name: hasMono
    ? "bindings/README.md: the console program outside Unity compiles with mcs as written and runs its tool call, cancel and error"
    : "bindings/README.md console program: SKIPPED (mcs/mono missing)",
  ignore: !hasMono,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      await Deno.writeTextFile(`${dir}/Game.cs`, await consoleExample());
      await Deno.copyFile(`${SRC}/OpenAppleModels.cs`, `${dir}/OpenAppleModels.cs`);
      // The command the example's first line gives, in the reader's folder.
      assertSucceeded(
        await run("mcs", ["-out:game.exe", "OpenAppleModels.cs", "Game.cs"], { cwd: dir }),
        "mcs",
      );
      const result = await run("mono", ["game.exe"], { cwd: dir, env: bridgeEnv(), timeoutMs: 60_000 });
      assertSucceeded(result, "mono game.exe");
      assert.deepEqual(result.stdout.trim().split("\n").filter((line) => !line.startsWith("… ")), [
        'guard: The gate says {"opened":false}',
        "cancelled: the turn was cancelled",
        "-32020 session_not_found: No session with id 'nobody'.",
      ]);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});

/** The first C# block of bindings/README.md after `heading`. */
async function readmeBlock(heading: RegExp): Promise<string> {
  const readme = await Deno.readTextFile(`${REPO_ROOT}/bindings/README.md`);
  const match = heading.exec(readme);
  assert.ok(match, `bindings/README.md has no section ${heading}`);
  const block = /```csharp\n([\s\S]*?)\n```/.exec(readme.slice(match.index));
  assert.ok(block, `the section ${heading} has no csharp block`);
  return block[1];
}

/** The names the README's Unity snippet uses without declaring them, as a game script would have them. */
const SNIPPET_SCRIPT = (body: string) =>
  `using System.Collections.Generic;
using System.Threading;
using UnityEngine;
using UnityEngine.UI;
using OpenAppleModels;

public class Snippet : MonoBehaviour
{
    public Text speech, goldLabel, dialog;
    public object gateSchema;
    CancellationToken ct;
    void SetPortrait(string emotion) { }

    async void Start()
    {
${body}
    }
}
`;

Deno.test({
  name: hasMono
    ? "bindings/README.md: the Unity snippet compiles against the UnityEngine stub, and Blacksmith.cs plays as written (walk away, scene change)"
    : "bindings/README.md Unity scripts: SKIPPED (mcs/mono missing)",
  ignore: !hasMono,
  sanitizeResources: false,
  async fn() {
    const dir = await Deno.makeTempDir();
    try {
      const snippet = await readmeBlock(/^## Unity \(/m);
      await Deno.writeTextFile(`${dir}/Snippet.cs`, SNIPPET_SCRIPT(snippet));
      await Deno.writeTextFile(
        `${dir}/Blacksmith.cs`,
        await readmeBlock(/^### An NPC's dialogue script in Unity/m),
      );
      const unity = [
        `${SRC}/OpenAppleModels.cs`,
        `${SRC}/OamBridgeBehaviour.cs`,
        `${SRC}/tests/UnityEngineStub.cs`,
      ];
      assertSucceeded(
        await run("mcs", ["-target:library", "-nowarn:219", "-out:snippet.dll", ...unity, "Snippet.cs"], {
          cwd: dir,
        }),
        "mcs (the Unity snippet)",
      );
      assertSucceeded(
        await run("mcs", [
          "-warnaserror",
          "-out:dialogue.exe",
          ...unity,
          `${SRC}/tests/ReadmeDialogueDriver.cs`,
          "Blacksmith.cs",
        ], { cwd: dir }),
        "mcs (Blacksmith.cs)",
      );
      // Every system-model turn plays this script: a line, then two slow ones that the player walks away from.
      const reply = (emotion: string, line: string, delayMs?: number) => ({
        json: { emotion, line, player_options: ["a", "b", "c"], ends_conversation: false },
        ...(delayMs ? { delayMs } : {}),
      });
      await Deno.writeTextFile(
        `${dir}/steps.json`,
        JSON.stringify([
          reply("proud", "Finest steel in the valley."),
          reply("curious", "Axes are a long story.", 30_000),
          reply("neutral", "Never finished.", 30_000),
        ]),
      );
      const result = await run("mono", ["dialogue.exe"], {
        cwd: dir,
        env: { ...bridgeEnv(), OAM_SCRIPT: `${dir}/steps.json` },
        timeoutMs: 60_000,
      });
      assertSucceeded(result, "mono dialogue.exe");
      assert.match(result.stdout, /dialogue ok/);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
});
