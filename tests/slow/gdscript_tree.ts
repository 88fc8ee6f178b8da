/**
 * Parses GDScript with tree-sitter (npm:tree-sitter + npm:tree-sitter-gdscript, prebuilt native addons) for
 * tests/slow/godot_syntax_slow.ts, which runs it as its own process with --no-lock and --no-config so these
 * packages stay out of deno.lock and out of `deno task test`'s module graph.
 *
 * stdin: {"sources": [{"name", "text"}], "queries": {"<key>": "<tree-sitter query>"}}
 * stdout: {"results": [{"name", "problems": [{"kind", "line", "column", "text"}],
 *          "captures": {"<key>": [{"capture", "line", "text"}]}}]}
 * Lines and columns are 1-based. A problem is an ERROR node (text the grammar could not parse) or a MISSING
 * node (a token the parser had to invent, such as a closing parenthesis).
 */
import Parser from "npm:tree-sitter@0.22.4";
import GDScript from "npm:tree-sitter-gdscript@6.1.0";

interface Point {
  row: number;
  column: number;
}

interface SyntaxNode {
  type: string;
  text: string;
  isMissing: boolean;
  hasError: boolean;
  startPosition: Point;
  children: SyntaxNode[];
}

interface Source {
  name: string;
  text: string;
}

const input = JSON.parse(await new Response(Deno.stdin.readable).text()) as {
  sources: Source[];
  queries?: Record<string, string>;
};

const parser = new Parser();
parser.setLanguage(GDScript as Parser.Language);
const queries = Object.entries(input.queries ?? {}).map(([key, text]) =>
  [key, new Parser.Query(GDScript as Parser.Language, text)] as const
);

function problems(
  node: SyntaxNode,
  lines: string[],
  found: { kind: string; line: number; column: number; text: string }[],
) {
  if (node.type === "ERROR" || node.isMissing) {
    // tree-sitter's error recovery may leave an empty ERROR node at the end of the line before the mistake
    // (the header of the function holding it): then the text is that line's.
    const text = node.isMissing
      ? `missing ${node.type}`
      : node.text.split("\n")[0] || lines[node.startPosition.row];
    found.push({
      kind: node.isMissing ? "MISSING" : "ERROR",
      line: node.startPosition.row + 1,
      column: node.startPosition.column + 1,
      text: text.trim().slice(0, 100),
    });
  } else if (node.hasError) {
    // Only below a node that has one; an ERROR node is reported once, not again for the pieces inside it.
    for (const child of node.children) problems(child, lines, found);
  }
  return found;
}

const results = input.sources.map(({ name, text }) => {
  const tree = parser.parse(text);
  const root = tree.rootNode as unknown as SyntaxNode;
  const captures: Record<string, { capture: string; line: number; text: string }[]> = {};
  for (const [key, query] of queries) {
    captures[key] = query.captures(tree.rootNode).map(({ name: capture, node }) => ({
      capture,
      line: node.startPosition.row + 1,
      text: node.text,
    }));
  }
  return { name, problems: problems(root, text.split("\n"), []), captures };
});

await Deno.stdout.write(new TextEncoder().encode(JSON.stringify({ results }) + "\n"));
