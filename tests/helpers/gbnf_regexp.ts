/**
 * A GBNF expression (the subset the grammar rules write: literals, character classes, groups, `|`, `?`, `*`,
 * `+`, `{m}`, `{m,n}`, `{m,}`) as an anchored RegExp, so tests can check which texts a rule admits without a
 * model. Throws on anything else (a rule reference, say).
 */
export function gbnfToRegExp(expression: string): RegExp {
  let out = "";
  let i = 0;
  while (i < expression.length) {
    const c = expression[i];
    if (c === " ") {
      i++;
    } else if (c === '"') {
      let j = i + 1;
      let text = "";
      while (expression[j] !== '"') {
        if (j >= expression.length) throw new Error(`unterminated literal in ${expression}`);
        if (expression[j] === "\\") {
          const e = expression[j + 1];
          text += e === "n" ? "\n" : e === "r" ? "\r" : e === "t" ? "\t" : e;
          j += 2;
        } else {
          text += expression[j++];
        }
      }
      out += `(?:${text.replace(/[.*+?^${}()|[\]\\\/]/g, "\\$&")})`;
      i = j + 1;
    } else if (c === "[") {
      const j = expression.indexOf("]", i);
      out += expression.slice(i, j + 1);
      i = j + 1;
    } else if (c === "(") {
      out += "(?:";
      i++;
    } else if (c === ")" || c === "|" || c === "?" || c === "*" || c === "+") {
      out += c;
      i++;
    } else if (c === "{") {
      const j = expression.indexOf("}", i);
      out += expression.slice(i, j + 1);
      i = j + 1;
    } else {
      throw new Error(`unexpected '${c}' at ${i} in ${expression}`);
    }
  }
  return new RegExp(`^(?:${out})$`, "u");
}
