// An editor, as far as ACP goes: the official client library (@zed-industries/agent-client-protocol)
// drives `corecoder --acp` through one session and prints what it saw, as JSON, for
// tests/command/test_acp.py to check.
//
//   node client.mjs SCENARIO CWD [SESSION_ID] -- COMMAND ARGS...
//
// SCENARIO "turns": a new session; a turn whose write is allowed once; a turn whose `sleep` is
//   cancelled while it runs (once the editor sees it in progress); a turn after it.
// SCENARIO "load": session/load of SESSION_ID on a fresh agent, then one more turn.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";

import * as acp from "@zed-industries/agent-client-protocol";

const [scenario, cwd, ...rest] = process.argv.slice(2);
const split = rest.indexOf("--");
const [sessionToLoad] = rest.slice(0, split);
const [command, ...args] = rest.slice(split + 1);

const agent = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"] });
const seen = { updates: [], permissions: [], stops: [] };
let onUpdate = () => {};

class Editor {
  async requestPermission(params) {
    seen.permissions.push({ title: params.toolCall.title, options: params.options.map((o) => o.kind) });
    return { outcome: { outcome: "selected", optionId: params.options[0].optionId } };
  }

  async sessionUpdate(params) {
    const update = params.update;
    const text = update.content && update.content.type === "text" ? update.content.text : undefined;
    seen.updates.push({ kind: update.sessionUpdate, status: update.status, title: update.title,
      text, entries: update.entries });
    onUpdate(update);
  }

  async writeTextFile() { return {}; }

  async readTextFile() { return { content: "" }; }
}

const stream = acp.ndJsonStream(Writable.toWeb(agent.stdin), Readable.toWeb(agent.stdout));
const connection = new acp.ClientSideConnection(() => new Editor(), stream);

async function turn(sessionId, text) {
  const result = await connection.prompt({ sessionId, prompt: [{ type: "text", text }] });
  seen.stops.push(result.stopReason);
}

try {
  const init = await connection.initialize({ protocolVersion: acp.PROTOCOL_VERSION,
    clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } } });
  seen.protocolVersion = init.protocolVersion;
  seen.loadSession = init.agentCapabilities.loadSession;
  let sessionId = sessionToLoad;
  if (scenario === "turns") {
    sessionId = (await connection.newSession({ cwd, mcpServers: [] })).sessionId;
    await turn(sessionId, "write the notes");
    // cancel the next turn once its command is seen running
    onUpdate = (update) => {
      if (update.sessionUpdate === "tool_call" && update.status === "in_progress") {
        onUpdate = () => {};
        connection.cancel({ sessionId });
      }
    };
    await turn(sessionId, "wait a while");
    await turn(sessionId, "are you still there?");
  } else {
    await connection.loadSession({ sessionId, cwd, mcpServers: [] });
    seen.replayed = seen.updates.length;
    await turn(sessionId, "one more thing");
  }
  seen.sessionId = sessionId;
} catch (error) {
  seen.error = String(error && error.message ? error.message : JSON.stringify(error));
} finally {
  agent.stdin.end();
  agent.kill("SIGTERM");
}
process.stdout.write(JSON.stringify(seen) + "\n");
