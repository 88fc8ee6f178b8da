/*
 * example.c - a castle guard with one client tool (open_gate), on the scripted
 * model so it runs anywhere. The game answers tool/call requests from the
 * callback; the main thread runs the turn with oam_call_blocking().
 *
 *   OAM_BRIDGE_COMMAND="deno run --allow-read --allow-env --allow-ffi /path/to/cli.ts stdio" ./example
 *   OAM_BRIDGE_PATH=/path/to/oam ./example
 */
#include "open_apple_models.h"

#include <stdio.h>
#include <string.h>

/* Copies the string value of "key" (first occurrence) into out. Good enough for this example. */
static int string_field(const char *json, const char *key, char *out, size_t size) {
    char pattern[64];
    const char *start, *end;
    snprintf(pattern, sizeof pattern, "\"%s\":\"", key);
    start = strstr(json, pattern);
    if (!start) return 0;
    start += strlen(pattern);
    end = strchr(start, '"');
    if (!end || (size_t)(end - start) >= size) return 0;
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = '\0';
    return 1;
}

/* Runs on the library's reader thread, never concurrently with itself. */
static void on_message(const char *json_line, void *user_data) {
    oam_bridge **bridge = user_data;
    char id[64], gate[64], reply[256];
    if (strstr(json_line, "\"method\":\"session/event\"") && strstr(json_line, "\"type\":\"text\"")) {
        char delta[256];
        if (string_field(json_line, "delta", delta, sizeof delta)) printf("  [stream] %s\n", delta);
        return;
    }
    if (!strstr(json_line, "\"method\":\"tool/call\"")) return;
    /* The game engine acts here: play the gate animation, then report back. */
    if (!string_field(json_line, "id", id, sizeof id)) return;
    if (!string_field(json_line, "gate", gate, sizeof gate)) gate[0] = '\0';
    printf("  [engine] open_gate(gate: \"%s\")\n", gate);
    snprintf(reply, sizeof reply,
             "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"result\":{\"output\":\"the portcullis chain is jammed\"}}",
             id);
    oam_bridge_send(*bridge, reply);
}

int main(void) {
    static oam_bridge *bridge;
    /* The player's line, as typed into the game's chat box. */
    const char *player_line = "Please open the \"north\" gate.\nI'm the king's messenger!";
    char request[512], *prompt, *response;
    int ok;

    printf("libopen_apple_models %s\n", oam_version());
    bridge = oam_bridge_create(on_message, &bridge);
    if (!bridge) {
        fprintf(stderr, "could not start the bridge (set OAM_BRIDGE_COMMAND or OAM_BRIDGE_PATH)\n");
        return 1;
    }

    response = oam_call_blocking(bridge,
        "{\"id\":1,\"method\":\"session/create\",\"params\":{"
        "\"session\":\"guard\","
        "\"instructions\":\"You are a castle guard in a game. Use tools to act. Reply in one sentence.\","
        "\"tools\":[{\"name\":\"open_gate\","
        "\"description\":\"Ask the game engine to open a named gate. Returns whether it opened.\","
        "\"parameters\":{\"type\":\"object\",\"properties\":{\"gate\":{\"type\":\"string\"}},\"required\":[\"gate\"]}}],"
        "\"options\":{\"toolChoice\":\"required\"},"
        "\"model\":{\"type\":\"scripted\",\"steps\":["
        "{\"toolCalls\":[{\"name\":\"open_gate\",\"arguments\":{\"gate\":\"north\"}}]},"
        "{\"template\":\"The north gate stays shut: {toolOutput}\"}]}}}",
        5000);
    printf("create: %s\n", response);
    oam_string_free(response);

    /* What the player typed goes in through oam_json_quote(): pasted between quotes as it is, its quotes
     * and line break would make the request invalid JSON. */
    prompt = oam_json_quote(player_line);
    ok = prompt && snprintf(request, sizeof request,
                            "{\"id\":2,\"method\":\"session/respond\",\"params\":{\"session\":\"guard\","
                            "\"prompt\":%s,\"stream\":true}}",
                            prompt) < (int)sizeof request; /* a longer line would be cut: no valid JSON */
    oam_string_free(prompt);
    if (!ok) {
        fprintf(stderr, "the player's line does not fit in the request\n");
        oam_bridge_destroy(bridge);
        return 1;
    }
    response = oam_call_blocking(bridge, request, 10000);
    printf("respond: %s\n", response);
    ok = response && strstr(response, "\"result\"") && strstr(response, "portcullis chain is jammed");
    oam_string_free(response);

    oam_bridge_destroy(bridge);
    printf(ok ? "ok\n" : "FAILED\n");
    return ok ? 0 : 1;
}
