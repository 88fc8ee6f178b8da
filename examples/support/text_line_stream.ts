/** Splits a text stream into lines (LF or CRLF), like @std/streams' TextLineStream (JSR is not used here). */
export class TextLineStream extends TransformStream<string, string> {
  constructor() {
    let buffer = "";
    super({
      transform(chunk, controller) {
        buffer += chunk;
        let nl: number;
        while ((nl = buffer.indexOf("\n")) !== -1) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          controller.enqueue(line.endsWith("\r") ? line.slice(0, -1) : line);
        }
      },
      flush(controller) {
        if (buffer !== "") controller.enqueue(buffer);
      },
    });
  }
}
