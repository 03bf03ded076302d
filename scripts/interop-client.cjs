// One MCP session with the TypeScript SDK's client, the one the MCP Inspector is built on, taken from the
// Inspector's own install (scripts/node-tools): scripts/interop.py runs this once per transport and era.
//
//   node scripts/interop-client.cjs INSPECTOR_FOLDER ERA CALLS_JSON (URL | -- COMMAND ARG...)
//
// Lists the tools, makes each call in CALLS_JSON ([[tool, arguments], ...]), lists the resources and their
// templates, reads one document, and prints every answer as one JSON object; a call that fails is kept as
// {"error": message}. Exits 1 if the session cannot start.
"use strict";
const { createRequire } = require("node:module");
const path = require("node:path");

async function main() {
  const [folder, era, calls, ...target] = process.argv.slice(2);
  const sdk = createRequire(path.resolve(folder, "package.json"));
  const { Client, StreamableHTTPClientTransport } = sdk("@modelcontextprotocol/client");
  let transport;
  if (target[0] === "--") {
    const { StdioClientTransport } = sdk("@modelcontextprotocol/client/stdio");
    transport = new StdioClientTransport({ command: target[1], args: target.slice(2), env: process.env });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(target[0]));
  }
  // "modern" pins the first modern revision, as the Inspector's --protocol-era modern does.
  const mode = era === "modern" ? { pin: "2026-07-28" } : era;
  const client = new Client({ name: "lancelot-interop", version: "1" }, { versionNegotiation: { mode } });
  // The server may start at a low priority beside the test suite: as long as the Inspector's connect timeout.
  const timeout = { timeout: 120000 };
  await client.connect(transport, timeout);
  const answer = async (request) => {
    try {
      return await request();
    } catch (error) {
      return { error: String(error && error.message ? error.message : error) };
    }
  };
  const session = { era: client.getProtocolEra() };
  session.tools = await answer(() => client.listTools(undefined, timeout));
  session.calls = [];
  for (const [name, args] of JSON.parse(calls)) {
    session.calls.push(await answer(() => client.callTool({ name, arguments: args }, timeout)));
  }
  session.resources = await answer(() => client.listResources(undefined, timeout));
  session.templates = await answer(() => client.listResourceTemplates(undefined, timeout));
  const uri = "lancelot://documents/guide/puncture.md";
  session.read = await answer(() => client.readResource({ uri }, timeout));
  await client.close();
  process.stdout.write(JSON.stringify(session) + "\n");
}

main().catch((error) => {
  process.stderr.write(`interop-client: ${error && error.stack ? error.stack : error}\n`);
  process.exit(1);
});
