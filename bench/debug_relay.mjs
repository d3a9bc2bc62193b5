// The baseline the debug bench measures against: the original `debug-bridge connect --json`'s relay
// as its protocol reference describes it (a `ws` server at /debug; every app frame to every agent
// unparsed; one JSON line per app message on stdout), reduced to the path being timed: console
// telemetry. Usage: node debug_relay.mjs <ws package folder> <port> <session>
import { createRequire } from "node:module";

const [wsDir, port, session] = process.argv.slice(2);
const { WebSocketServer } = createRequire(import.meta.url)(wsDir);
const wss = new WebSocketServer({ port: Number(port), host: "127.0.0.1", path: "/debug" });
const agents = new Set();

wss.on("connection", (socket, req) => {
  const url = new URL(req.url, "http://localhost");
  if (url.searchParams.get("sessionId") !== session) return socket.close(4000, "Invalid session");
  if (url.searchParams.get("role") === "agent") {
    agents.add(socket);
    socket.on("close", () => agents.delete(socket));
    return;
  }
  socket.on("message", (data) => {
    const text = data.toString();
    for (const agent of agents) agent.send(text);
    let msg;
    try { msg = JSON.parse(text); } catch { return; }
    if (msg.type === "console") {
      console.log(JSON.stringify({ event: "telemetry", type: "console", level: msg.level, args: msg.args }));
    } else if (msg.type === "hello") {
      console.log(JSON.stringify({ event: "app_connected", appName: msg.appName, appVersion: msg.appVersion, url: msg.url }));
    }
  });
});
wss.on("listening", () => {
  console.log(JSON.stringify({ event: "server_started", url: `ws://127.0.0.1:${port}/debug`, session }));
});
