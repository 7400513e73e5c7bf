// lorebook plugin for OpenCode, written by `lore hooks install opencode`; `lore hooks uninstall opencode` removes it.
// It pipes OpenCode's hooks, as JSON, into `lore hook opencode <name>` (in a project: this
// repository's .lore/bin/lore) and puts the brief and the lessons lore answers into the system
// prompt. It never throws into OpenCode and returns at once when lore cannot be found.
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const LORE = null; // lorebook: the command of a user-wide install; null: the project's launcher
const CAPTURE_MS = 10000; // a capture returns once lore has read it (the write goes on detached)
const CONTEXT_MS = 30000; // lore's own time budget ends a context hook well before this
const EVENTS = new Set(["session.created", "session.compacted", "session.idle", "session.deleted"]);

function command() {
  if (LORE) return existsSync(LORE[0]) ? LORE : null;
  const here = dirname(fileURLToPath(import.meta.url)); // <repo>/.opencode/plugins
  const launcher = join(here, "..", "..", ".lore", "bin", "lore");
  return existsSync(launcher) ? ["sh", launcher] : null;
}

// lore's answer to one hook (its stdout), or null; never rejects
function run(name, payload, wait, cwd) {
  return new Promise((resolve) => {
    let done = false;
    let timer;
    const finish = (value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(value);
    };
    try {
      const cmd = command();
      if (!cmd) return finish(null);
      const stdin = JSON.stringify(payload);
      const child = spawn(cmd[0], [...cmd.slice(1), "hook", "opencode", name], {
        cwd,
        stdio: ["pipe", "pipe", "ignore"],
      });
      let out = "";
      timer = setTimeout(() => {
        try {
          child.kill("SIGKILL");
        } catch {}
        finish(null);
      }, wait);
      child.on("error", () => finish(null));
      child.stdout.on("data", (chunk) => {
        out += chunk;
      });
      child.on("close", () => finish(out));
      child.stdin.on("error", () => {});
      child.stdin.end(stdin);
    } catch {
      finish(null);
    }
  });
}

// the additionalContext of lore's answer ("" when none)
function contextOf(out) {
  try {
    const lines = (out || "").trim().split("\n");
    const answer = JSON.parse(lines[lines.length - 1]);
    return typeof answer?.additionalContext === "string" ? answer.additionalContext : "";
  } catch {
    return "";
  }
}

export const LorebookPlugin = async (ctx) => {
  const directory = ctx?.directory || ctx?.worktree || process.cwd();
  const briefs = new Map(); // session id -> Promise of the brief (asked once per session)
  const lessons = new Map(); // session id -> the lessons about its latest prompt
  const brief = (id, event) => {
    if (!briefs.has(id)) {
      briefs.set(id, run("session.created", { event, directory }, CONTEXT_MS, directory).then(contextOf));
    }
    return briefs.get(id);
  };
  return {
    event: async ({ event }) => {
      try {
        if (!event || !EVENTS.has(event.type)) return;
        const id = event.properties?.info?.id;
        if (event.type === "session.created" && typeof id === "string") await brief(id, event);
        else await run(event.type, { event, directory }, CAPTURE_MS, directory);
      } catch {}
    },
    "chat.message": async (input, output) => {
      try {
        const answer = await run("chat.message", { input, output, directory }, CONTEXT_MS, directory);
        if (typeof input?.sessionID === "string") lessons.set(input.sessionID, contextOf(answer));
      } catch {}
    },
    "tool.execute.after": async (input, output) => {
      try {
        await run("tool.execute.after", { input, output, directory }, CAPTURE_MS, directory);
      } catch {}
    },
    "experimental.chat.system.transform": async (input, output) => {
      try {
        const id = input?.sessionID;
        if (typeof id !== "string" || !Array.isArray(output?.system)) return;
        // the first request of a session whose session.created this plugin did not see
        const started = { type: "session.created", properties: { info: { id } } };
        for (const text of [await brief(id, started), lessons.get(id)]) {
          if (text) output.system.push(text);
        }
      } catch {}
    },
  };
};
