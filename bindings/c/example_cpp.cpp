/*
 * example_cpp.cpp - the castle guard of example.c, from C++ and shaped like an
 * engine integration (Unreal: a subsystem or actor component that ticks):
 *
 *   - Bridge owns the oam_bridge handle (RAII; destroyed before the queue the
 *     callback writes to).
 *   - The callback runs on the library's reader thread: it only copies the line
 *     into a mutex-guarded queue. It must not throw and must not touch game
 *     state.
 *   - Game::Tick() runs on the main ("game") thread: it drains the queue and
 *     handles each line there, answering the tool/call with oam_bridge_send().
 *   - The turn (session/respond, which causes a tool/call) is sent with
 *     oam_bridge_send() and its response is picked out of the queue by id; a
 *     blocking call on the game thread would wait for a tool/call that sits
 *     in the queue it cannot drain.
 *
 * Build (the library itself compiled as C, see bindings/README.md):
 *   g++ -std=c++17 -Wall -Wextra -Wpedantic -Ibindings/c -o example_cpp bindings/c/example_cpp.cpp \
 *       -L.build -lopen_apple_models -Wl,-rpath,'$ORIGIN' -pthread
 *   OAM_BRIDGE_COMMAND="deno run --allow-read --allow-env --allow-ffi /path/to/cli.ts stdio" ./example_cpp
 */
#include "open_apple_models.h"

#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace {

/* Lines from the bridge: pushed on the reader thread, drained on the game thread.
 * (Unreal: FCriticalSection + TArray<FString>, or TQueue<FString, EQueueMode::Spsc>.) */
class MessageQueue {
public:
    void Push(std::string line) {
        std::lock_guard<std::mutex> lock(mutex_);
        lines_.push_back(std::move(line));
    }
    std::vector<std::string> TakeAll() {
        std::lock_guard<std::mutex> lock(mutex_);
        return std::exchange(lines_, {});
    }

private:
    std::mutex mutex_;
    std::vector<std::string> lines_;
};

/* The callback given to the C library. Reader thread; json_line is valid only during the call, so it is
 * copied. noexcept: an exception must not unwind into the library's thread; if the copy throws (out of
 * memory), std::terminate ends the program there. (Unreal builds without exceptions; FString does not
 * throw.) */
void OnBridgeMessage(const char *json_line, void *user_data) noexcept {
    static_cast<MessageQueue *>(user_data)->Push(json_line);
}

/* Owns the handle. The queue must outlive it: oam_bridge_destroy() waits for a running callback, and none
 * comes after it returns. */
class Bridge {
public:
    explicit Bridge(MessageQueue &queue) : handle_(oam_bridge_create(&OnBridgeMessage, &queue)) {}
    ~Bridge() { oam_bridge_destroy(handle_); }
    Bridge(const Bridge &) = delete;
    Bridge &operator=(const Bridge &) = delete;

    explicit operator bool() const { return handle_ != nullptr; }

    /* Any thread. Returns at once; the response comes through the queue. */
    bool Send(const std::string &json) { return oam_bridge_send(handle_, json.c_str()) == OAM_OK; }

    /* Blocks until the response. Only for requests that cause no tool/call when called on the game thread. */
    std::string Call(const std::string &json, int timeout_ms) {
        std::unique_ptr<char, void (*)(char *)> response(oam_call_blocking(handle_, json.c_str(), timeout_ms),
                                                        &oam_string_free);
        return response ? std::string(response.get()) : std::string();
    }

private:
    oam_bridge *handle_;
};

/* text as a JSON string literal (with its quotes), for text the game did not write itself. */
std::string JsonQuote(const std::string &text) {
    std::unique_ptr<char, void (*)(char *)> quoted(oam_json_quote(text.c_str()), &oam_string_free);
    return quoted ? std::string(quoted.get()) : std::string("\"\"");
}

/* Minimal JSON access for this example (an engine has its own parser: Unreal's FJsonSerializer).
 * Returns the raw text of the top-level member `key` of the object `json` ("\"t-1\"", "2", "{...}"),
 * or "" when it is absent. Keys are compared as written (no escapes in the keys used here). */
std::size_t SkipValue(const std::string &json, std::size_t i) {
    int depth = 0;
    bool in_string = false;
    for (; i < json.size(); ++i) {
        const char c = json[i];
        if (in_string) {
            if (c == '\\') ++i;
            else if (c == '"') {
                in_string = false;
                if (depth == 0) return i + 1;
            }
        } else if (c == '"') {
            in_string = true;
        } else if (c == '{' || c == '[') {
            ++depth;
        } else if (c == '}' || c == ']') {
            if (depth == 0) return i; /* end of a scalar that closes its container */
            if (--depth == 0) return i + 1;
        } else if (depth == 0 && (c == ',' || c == ' ')) {
            return i;
        }
    }
    return i;
}

std::string Member(const std::string &json, const std::string &key) {
    const std::string quoted = "\"" + key + "\"";
    std::size_t i = json.find('{');
    while (i != std::string::npos && i < json.size()) {
        i = json.find('"', i + 1); /* next key */
        if (i == std::string::npos) break;
        const std::size_t key_end = SkipValue(json, i);
        const std::size_t value = json.find_first_not_of(" :", key_end);
        if (value == std::string::npos) break;
        const std::size_t value_end = SkipValue(json, value);
        if (json.compare(i, key_end - i, quoted) == 0) return json.substr(value, value_end - value);
        i = json.find_first_of(",}", value_end);
        if (i == std::string::npos || json[i] == '}') break;
    }
    return std::string();
}

class Game {
public:
    /* Session setup causes no tool/call, so a blocking call on the game thread is fine. */
    bool Start() {
        if (!bridge_) {
            std::fprintf(stderr, "could not start the bridge (set OAM_BRIDGE_COMMAND or OAM_BRIDGE_PATH)\n");
            return false;
        }
        const std::string created = bridge_.Call(
            R"({"id":1,"method":"session/create","params":{"session":"guard",)"
            R"("instructions":"You are a castle guard in a game. Use tools to act. Reply in one sentence.",)"
            R"("tools":[{"name":"open_gate","description":"Ask the game engine to open a named gate.",)"
            R"("parameters":{"type":"object","properties":{"gate":{"type":"string"}},"required":["gate"]}}],)"
            R"("options":{"toolChoice":"required"},)"
            R"("model":{"type":"scripted","steps":[)"
            R"({"toolCalls":[{"name":"open_gate","arguments":{"gate":"north"}}]},)"
            R"({"template":"The north gate stays shut: {toolOutput}"}]}}})",
            5000);
        std::printf("create: %s\n", created.c_str());
        if (Member(created, "result").empty()) return false;
        /* The turn: sent, not awaited; Tick() answers its tool/call and picks up its response (id 2). What
         * the player typed goes in through JsonQuote(): its quotes and line break would break the JSON. */
        const std::string player_line = "Please open the \"north\" gate.\nI'm the king's messenger!";
        return bridge_.Send(R"({"jsonrpc":"2.0","id":2,"method":"session/respond","params":{"session":"guard",)"
                            R"("prompt":)" + JsonQuote(player_line) + R"(,"stream":true}})");
    }

    /* Game thread, once per frame. */
    void Tick() {
        for (const std::string &line : queue_.TakeAll()) Handle(line);
    }

    bool Finished() const { return !reply_.empty(); }
    const std::string &Reply() const { return reply_; }

private:
    void Handle(const std::string &line) {
        const std::string method = Member(line, "method");
        if (method == "\"tool/call\"") {
            const std::string params = Member(line, "params");
            const std::string call = Member(params, "call");
            std::printf("  [game thread: %s] %s(%s)\n", OnGameThread() ? "yes" : "NO",
                        Member(call, "name").c_str(), Member(call, "arguments").c_str());
            /* The engine acts here (animation, world state), then answers. The id is echoed as written. */
            bridge_.Send(R"({"jsonrpc":"2.0","id":)" + Member(line, "id") +
                         R"(,"result":{"output":"the portcullis chain is jammed"}})");
        } else if (method == "\"session/event\"") {
            const std::string event = Member(Member(line, "params"), "event");
            if (Member(event, "type") == "\"text\"") std::printf("  [stream] %s\n", Member(event, "delta").c_str());
        } else if (method.empty() && Member(line, "id") == "2") {
            reply_ = line; /* the turn's response: "result" or "error" */
        }
    }

    bool OnGameThread() const { return std::this_thread::get_id() == game_thread_; }

    const std::thread::id game_thread_ = std::this_thread::get_id();
    /* Declaration order is destruction order reversed: bridge_ is destroyed (and its callback stopped)
     * before queue_. */
    MessageQueue queue_;
    Bridge bridge_{queue_};
    std::string reply_;
};

} // namespace

int main() {
    std::printf("libopen_apple_models %s\n", oam_version());
    bool ok = false;
    {
        Game game;
        if (!game.Start()) return 1;
        /* The game loop. The deadline only keeps a broken setup from hanging this example. */
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!game.Finished() && std::chrono::steady_clock::now() < deadline) {
            game.Tick();
            std::this_thread::sleep_for(std::chrono::milliseconds(16));
        }
        std::printf("respond: %s\n", game.Reply().c_str());
        ok = !Member(game.Reply(), "result").empty() &&
             game.Reply().find("portcullis chain is jammed") != std::string::npos;
    } /* ~Game: oam_bridge_destroy() shuts the bridge down, then the queue goes */
    std::printf(ok ? "ok\n" : "FAILED\n");
    return ok ? 0 : 1;
}
